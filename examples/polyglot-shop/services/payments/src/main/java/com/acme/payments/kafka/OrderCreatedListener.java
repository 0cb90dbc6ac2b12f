package com.acme.payments.kafka;

import com.acme.payments.clients.LedgerRecorder;
import com.acme.payments.clients.StockReservations;
import com.acme.payments.web.PaymentRepository;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * Charges each new order: reserve stock, authorize, book it in the ledger, then announce
 * {@code payments.completed}.
 */
@Component
public class OrderCreatedListener {
    private final StockReservations stock;
    private final LedgerRecorder ledger;
    private final PaymentRepository payments;
    private final KafkaTemplate<String, String> kafkaTemplate;

    public OrderCreatedListener(StockReservations stock, LedgerRecorder ledger,
            PaymentRepository payments, KafkaTemplate<String, String> kafkaTemplate) {
        this.stock = stock;
        this.ledger = ledger;
        this.payments = payments;
        this.kafkaTemplate = kafkaTemplate;
    }

    @KafkaListener(topics = Topics.ORDERS_CREATED, groupId = "payments")
    public void onOrderCreated(OrderCreated event) {
        if (!stock.reserve(event.id(), event.firstSku(), event.quantity())) {
            return;
        }
        var payment = payments.authorize(event.id(), event.total());
        ledger.record(event.id(), "sales", event.total());
        kafkaTemplate.send(Topics.PAYMENTS_COMPLETED, event.id(), payment.getId());
    }

    /** The JSON body of an {@code orders.created} message. */
    public record OrderCreated(String id, String firstSku, int quantity, long totalCents) {
        com.acme.common.v1.Money total() {
            return com.acme.common.v1.Money.newBuilder().setAmountMinor(totalCents).build();
        }
    }
}
