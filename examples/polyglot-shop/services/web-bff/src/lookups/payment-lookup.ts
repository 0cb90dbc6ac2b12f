import { Injectable } from '@nestjs/common';

export interface PaymentView {
  id: string;
  orderId: string;
  authorized: boolean;
}

const PAYMENTS_URL = process.env.PAYMENTS_URL ?? 'http://payments:8080';

/** Reads payments from the payments service's REST API. */
@Injectable()
export class PaymentLookup {
  async forOrder(orderId: string): Promise<PaymentView | null> {
    const response = await fetch(`${PAYMENTS_URL}/payments/${encodeURIComponent(orderId)}`);
    if (response.status === 404) {
      return null;
    }
    return (await response.json()) as PaymentView;
  }
}
