package com.acme.payments.web;

import com.acme.common.v1.Money;
import com.acme.payments.v1.Payment;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Repository;

/** Payments by order id, in memory. */
@Repository
public class PaymentRepository {
    private final Map<String, Payment> byOrder = new ConcurrentHashMap<>();

    public Payment authorize(String orderId, Money amount) {
        Payment payment = Payment.newBuilder()
                .setId(UUID.randomUUID().toString())
                .setOrderId(orderId)
                .setAmount(amount)
                .setAuthorized(true)
                .build();
        byOrder.put(orderId, payment);
        return payment;
    }

    public Optional<Payment> find(String orderId) {
        return Optional.ofNullable(byOrder.get(orderId));
    }
}
