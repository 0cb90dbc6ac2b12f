package com.acme.payments.kafka;

/** Kafka topic names used by payments; keep in sync with docs/architecture.md. */
public final class Topics {
    public static final String ORDERS_CREATED = "orders.created";
    public static final String PAYMENTS_COMPLETED = "payments.completed";

    private Topics() {}
}
