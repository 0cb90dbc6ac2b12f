// Barrel: the rest of the BFF imports lookups from './lookups' only.
export * from './order-lookup';
export { PaymentLookup, PaymentView } from './payment-lookup';
