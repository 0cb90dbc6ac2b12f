package com.acme.shipping

import java.time.Instant
import java.util.concurrent.ConcurrentHashMap
import org.springframework.stereotype.Component

/** A parcel on its way to the customer. */
data class Shipment(
    val orderId: String,
    val carrier: String,
    val trackingNumber: String,
    val dispatchedAt: Instant,
)

/** Shipments by order id, in memory. */
@Component
class ShipmentBook {
    private val byOrder = ConcurrentHashMap<String, Shipment>()

    fun add(shipment: Shipment): Shipment {
        byOrder[shipment.orderId] = shipment
        return shipment
    }

    fun find(orderId: String): Shipment? = byOrder[orderId]
}
