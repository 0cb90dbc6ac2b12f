// The public API gateway (Express): orders over gRPC, the rest proxied over HTTP.
const express = require('express');
const orders = require('./clients/orders');
const { fetchRecommendations, fetchShipment } = require('./clients/services');
const orderStream = require('./events/order-stream');

const app = express();
app.use(express.json());

async function createOrder(req, res) {
  const reply = await orders.createOrder({ customerId: req.body.customerId, items: req.body.items, currency: 'EUR' });
  res.status(201).json(reply.order);
}

async function getOrder(req, res) {
  res.json(await orders.getOrder(req.params.id));
}

async function getRecommendations(req, res) {
  res.json(await fetchRecommendations(req.params.userId));
}

async function getShipment(req, res) {
  res.json(await fetchShipment(req.params.orderId));
}

app.post('/api/orders', createOrder);
app.get('/api/orders/:id', getOrder);
app.get('/api/recommendations/:userId', getRecommendations);
app.get('/api/shipments/:orderId', getShipment);

orderStream.start((event) => console.log('order created', event.id));
app.listen(Number(process.env.PORT ?? 3000));
