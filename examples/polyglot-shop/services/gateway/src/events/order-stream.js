// Follows new orders (kafkajs) so the gateway can push status updates to browsers.
const { Kafka } = require('kafkajs');

const kafka = new Kafka({
  clientId: 'gateway',
  brokers: (process.env.KAFKA_BROKERS ?? 'kafka:9092').split(','),
});
const consumer = kafka.consumer({ groupId: 'gateway-order-stream' });

async function start(onOrderCreated) {
  await consumer.connect();
  await consumer.subscribe({ topic: process.env.ORDERS_TOPIC ?? 'orders.created', fromBeginning: false });
  await consumer.run({
    eachMessage: async ({ message }) => onOrderCreated(JSON.parse(message.value.toString())),
  });
}

module.exports = { start };
