import { Controller, Get, Param } from '@nestjs/common';
import { OrderLookup, PaymentLookup } from './lookups';

/** Everything the order page of the web shop shows, in one round trip. */
@Controller('bff')
export class BffController {
  constructor(
    private readonly orders: OrderLookup,
    private readonly payments: PaymentLookup,
  ) {}

  @Get('orders/:id')
  async orderPage(@Param('id') id: string) {
    const [order, payment] = await Promise.all([this.orders.find(id), this.payments.forOrder(id)]);
    return { order, payment };
  }
}
