package com.acme.shipping

import org.springframework.http.ResponseEntity
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.PathVariable
import org.springframework.web.bind.annotation.RequestMapping
import org.springframework.web.bind.annotation.RestController

/** Tracking lookups for the gateway. */
@RestController
@RequestMapping("/shipments")
class ShipmentController(private val book: ShipmentBook) {

    @GetMapping("/{orderId}")
    fun byOrder(@PathVariable orderId: String): ResponseEntity<Shipment> =
        book.find(orderId)?.let { ResponseEntity.ok(it) } ?: ResponseEntity.notFound().build()
}
