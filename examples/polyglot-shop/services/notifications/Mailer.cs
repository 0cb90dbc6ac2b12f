namespace Acme.Notifications;

/// <summary>Sends e-mail to customers.</summary>
public interface IMailer
{
    Task SendAsync(string orderId, string template, CancellationToken ct = default);
}

/// <summary>Writes e-mails to the console instead of sending them (local development).</summary>
public sealed class ConsoleMailer : IMailer
{
    private readonly ILogger<ConsoleMailer> _log;

    public ConsoleMailer(ILogger<ConsoleMailer> log) => _log = log;

    public Task SendAsync(string orderId, string template, CancellationToken ct = default)
    {
        _log.LogInformation("mail {Template} for order {OrderId}", template, orderId);
        return Task.CompletedTask;
    }
}
