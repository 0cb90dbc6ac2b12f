/** Kafka topics the BFF listens to. */
export enum Topics {
  InventoryReserved = 'inventory.reserved',
}
