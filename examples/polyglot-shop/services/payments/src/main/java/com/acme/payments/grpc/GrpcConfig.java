package com.acme.payments.grpc;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import java.io.IOException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Channels to the services payments calls, and the gRPC server it runs. */
@Configuration
public class GrpcConfig {
    @Bean
    public ManagedChannel inventoryChannel(@Value("${acme.inventory.target:inventory:50051}") String target) {
        return ManagedChannelBuilder.forTarget(target).usePlaintext().build();
    }

    @Bean
    public ManagedChannel ledgerChannel(@Value("${acme.ledger.target:ledger:50051}") String target) {
        return ManagedChannelBuilder.forTarget(target).usePlaintext().build();
    }

    @Bean(destroyMethod = "shutdown")
    public Server grpcServer(PaymentGrpcService service) throws IOException {
        return ServerBuilder.forPort(9090).addService(service).build().start();
    }
}
