using Microsoft.AspNetCore.Mvc;

namespace Acme.Notifications.Controllers;

/// <summary>Synchronous e-mail requests from other services.</summary>
[ApiController]
[Route("api/notifications")]
public class NotificationsController : ControllerBase
{
    private readonly IMailer _mailer;

    public NotificationsController(IMailer mailer) => _mailer = mailer;

    public record EmailRequest(string OrderId, string Template);

    [HttpPost("email")]
    public async Task<IActionResult> SendEmail([FromBody] EmailRequest request, CancellationToken ct)
    {
        await _mailer.SendAsync(request.OrderId, request.Template, ct);
        return Accepted();
    }
}
