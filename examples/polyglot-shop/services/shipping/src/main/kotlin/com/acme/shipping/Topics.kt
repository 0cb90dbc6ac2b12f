package com.acme.shipping

/** Topics shipping publishes to. */
object Topics {
    const val SHIPMENT_DISPATCHED = "shipments.dispatched"
}
