package com.acme.shipping

import java.time.Instant
import org.springframework.kafka.annotation.KafkaListener
import org.springframework.kafka.core.KafkaTemplate
import org.springframework.stereotype.Component
import org.springframework.web.client.RestTemplate

/** Books a shipment for every completed payment and tells the customer by e-mail. */
@Component
class PaymentsListener(
    private val book: ShipmentBook,
    private val kafkaTemplate: KafkaTemplate<String, String>,
    private val restTemplate: RestTemplate,
) {
    @KafkaListener(topics = ["payments.completed"], groupId = "shipping")
    fun onPaymentCompleted(orderId: String) {
        val shipment = book.add(Shipment(orderId, "acme-post", "TRK-$orderId", Instant.now()))
        kafkaTemplate.send(Topics.SHIPMENT_DISPATCHED, orderId, shipment.trackingNumber)
        val email = mapOf("orderId" to orderId, "template" to "shipment-dispatched")
        restTemplate.postForEntity("http://notifications:8080/api/notifications/email", email, String::class.java)
    }
}
