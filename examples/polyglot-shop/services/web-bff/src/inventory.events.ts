import { Controller, Logger } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Topics } from './topics';

interface StockReserved {
  order_id: string;
  sku: string;
  remaining: number;
}

/** Marks products as "almost gone" on the web shop when stock runs low. */
@Controller()
export class InventoryEvents {
  private readonly log = new Logger(InventoryEvents.name);

  @EventPattern(Topics.InventoryReserved)
  onStockReserved(@Payload() event: StockReserved): void {
    if (event.remaining < 5) {
      this.log.log(`${event.sku} is almost sold out`);
    }
  }
}
