import { join } from 'path';
import { Module } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { BffController } from './bff.controller';
import { InventoryEvents } from './inventory.events';
import { OrderLookup, PaymentLookup } from './lookups';

@Module({
  imports: [
    ClientsModule.register([
      {
        name: 'ORDERS_PACKAGE',
        transport: Transport.GRPC,
        options: {
          package: 'acme.orders.v1',
          protoPath: join(__dirname, '..', 'proto', 'orders.proto'),
          url: process.env.ORDERS_ADDR ?? 'orders:50051',
        },
      },
    ]),
  ],
  controllers: [BffController, InventoryEvents],
  providers: [OrderLookup, PaymentLookup],
})
export class AppModule {}
