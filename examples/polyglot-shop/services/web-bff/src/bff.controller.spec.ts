import { of } from 'rxjs';
import { BffController } from './bff.controller';
import { OrderLookup, OrderServiceClient, PaymentLookup } from './lookups';

describe('BffController', () => {
  it('joins the order and its payment', async () => {
    const orderService: OrderServiceClient = {
      getOrder: jest.fn(() => of({ id: 'ord-1', customerId: 'c-1', status: 'PAID', totalCents: 1200 })),
    };
    const grpc = { getService: () => orderService } as never;
    const orders = new OrderLookup(grpc);
    orders.onModuleInit();
    const payments = { forOrder: jest.fn(async () => null) } as unknown as PaymentLookup;

    const page = await new BffController(orders, payments).orderPage('ord-1');

    expect(orderService.getOrder).toHaveBeenCalledWith({ id: 'ord-1' });
    expect(page.order.id).toBe('ord-1');
  });
});
