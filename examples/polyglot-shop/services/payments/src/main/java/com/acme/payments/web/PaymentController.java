package com.acme.payments.web;

import com.acme.payments.v1.Payment;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** Read-only REST view of payments, used by the web BFF. */
@RestController
@RequestMapping("/payments")
public class PaymentController {
    private final PaymentRepository payments;

    public PaymentController(PaymentRepository payments) {
        this.payments = payments;
    }

    @GetMapping("/{orderId}")
    public ResponseEntity<PaymentView> byOrder(@PathVariable String orderId) {
        return payments.find(orderId)
                .map(p -> ResponseEntity.ok(PaymentView.of(p)))
                .orElse(ResponseEntity.notFound().build());
    }

    /** The JSON shape returned to the BFF. */
    public record PaymentView(String id, String orderId, boolean authorized) {
        static PaymentView of(Payment p) {
            return new PaymentView(p.getId(), p.getOrderId(), p.getAuthorized());
        }
    }
}
