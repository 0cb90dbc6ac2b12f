package com.acme.payments.clients;

import com.acme.common.v1.Money;
import com.acme.ledger.v1.LedgerServiceGrpc;
import com.acme.ledger.v1.RecordEntryRequest;
import io.grpc.ManagedChannel;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Component;

/** Books every authorized payment in the ledger (services/ledger, Rust). */
@Component
public class LedgerRecorder {
    private final LedgerServiceGrpc.LedgerServiceBlockingStub ledger;

    public LedgerRecorder(@Qualifier("ledgerChannel") ManagedChannel channel) {
        this.ledger = LedgerServiceGrpc.newBlockingStub(channel);
    }

    public String record(String orderId, String account, Money amount) {
        RecordEntryRequest request = RecordEntryRequest.newBuilder()
                .setOrderId(orderId)
                .setAccount(account)
                .setAmount(amount)
                .build();
        return ledger.recordEntry(request).getEntryId();
    }
}
