// gRPC client of OrderService, loaded at run time from the vendored proto/orders.proto.
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const definition = protoLoader.loadSync(path.join(__dirname, '..', '..', 'proto', 'orders.proto'), {
  keepCase: false,
  longs: String,
  defaults: true,
});
const ordersPackage = grpc.loadPackageDefinition(definition).acme.orders.v1;

const client = new ordersPackage.OrderService(process.env.ORDERS_ADDR ?? 'orders:50051', grpc.credentials.createInsecure());

function createOrder(request) {
  return new Promise((resolve, reject) => {
    client.createOrder(request, (err, reply) => (err ? reject(err) : resolve(reply)));
  });
}

function getOrder(id) {
  return new Promise((resolve, reject) => {
    client.getOrder({ id }, (err, order) => (err ? reject(err) : resolve(order)));
  });
}

module.exports = { createOrder, getOrder };
