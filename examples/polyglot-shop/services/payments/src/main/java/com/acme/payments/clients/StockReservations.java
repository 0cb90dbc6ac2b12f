package com.acme.payments.clients;

import com.acme.inventory.v1.InventoryServiceGrpc;
import com.acme.inventory.v1.ReserveStockRequest;
import com.acme.inventory.v1.ReserveStockResponse;
import io.grpc.ManagedChannel;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Component;

/** Reserves stock in the inventory service before a payment is taken. */
@Component
public class StockReservations {
    private final InventoryServiceGrpc.InventoryServiceBlockingStub inventory;

    public StockReservations(@Qualifier("inventoryChannel") ManagedChannel channel) {
        this.inventory = InventoryServiceGrpc.newBlockingStub(channel);
    }

    public boolean reserve(String orderId, String sku, int quantity) {
        ReserveStockRequest request = ReserveStockRequest.newBuilder()
                .setOrderId(orderId)
                .setSku(sku)
                .setQuantity(quantity)
                .build();
        ReserveStockResponse response = inventory.reserveStock(request);
        return response.getReserved();
    }
}
