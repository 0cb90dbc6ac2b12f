using Acme.Notifications;
using Acme.Notifications.Kafka;

var builder = WebApplication.CreateBuilder(args);
builder.Services.AddControllers();
builder.Services.AddSingleton<IMailer, ConsoleMailer>();
builder.Services.AddHostedService<ShipmentListener>();

var app = builder.Build();
app.MapControllers();
app.Run();
