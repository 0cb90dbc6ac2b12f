import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ClientGrpc } from '@nestjs/microservices';
import { Observable, lastValueFrom } from 'rxjs';

export interface Order {
  id: string;
  customerId: string;
  status: string;
  totalCents: number;
}

/** The generated-style TypeScript view of acme.orders.v1.OrderService. */
export interface OrderServiceClient {
  getOrder(request: { id: string }): Observable<Order>;
}

/** Reads orders from the orders service over gRPC. */
@Injectable()
export class OrderLookup implements OnModuleInit {
  private orderService!: OrderServiceClient;

  constructor(@Inject('ORDERS_PACKAGE') private readonly grpc: ClientGrpc) {}

  onModuleInit(): void {
    this.orderService = this.grpc.getService<OrderServiceClient>('OrderService');
  }

  find(id: string): Promise<Order> {
    return lastValueFrom(this.orderService.getOrder({ id }));
  }
}
