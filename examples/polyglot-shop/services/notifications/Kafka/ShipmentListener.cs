using Confluent.Kafka;

namespace Acme.Notifications.Kafka;

/// <summary>E-mails the customer when their parcel leaves the warehouse.</summary>
public sealed class ShipmentListener : BackgroundService
{
    private readonly IMailer _mailer;
    private readonly IConsumer<string, string> _consumer;

    public ShipmentListener(IMailer mailer, IConfiguration config)
    {
        _mailer = mailer;
        var settings = new ConsumerConfig
        {
            BootstrapServers = config["Kafka:BootstrapServers"] ?? "kafka:9092",
            GroupId = "notifications",
            AutoOffsetReset = AutoOffsetReset.Earliest,
        };
        _consumer = new ConsumerBuilder<string, string>(settings).Build();
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        _consumer.Subscribe(Topics.ShipmentDispatched);
        while (!stoppingToken.IsCancellationRequested)
        {
            var result = await Task.Run(() => _consumer.Consume(stoppingToken), stoppingToken);
            await _mailer.SendAsync(result.Message.Key, "shipment-dispatched", stoppingToken);
        }
        _consumer.Close();
    }
}
