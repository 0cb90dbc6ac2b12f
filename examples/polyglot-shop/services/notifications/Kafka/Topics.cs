namespace Acme.Notifications.Kafka;

/// <summary>Kafka topics this service reads.</summary>
public static class Topics
{
    public const string ShipmentDispatched = "shipments.dispatched";
}
