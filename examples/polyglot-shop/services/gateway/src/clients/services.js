// HTTP calls to the services that have no gRPC API.
const RECOMMENDATIONS_URL = process.env.RECOMMENDATIONS_URL ?? 'http://recommendations:4567';
const SHIPPING_URL = process.env.SHIPPING_URL ?? 'http://shipping:8080';

async function fetchRecommendations(userId) {
  const response = await fetch(`${RECOMMENDATIONS_URL}/recommendations/${encodeURIComponent(userId)}`);
  if (!response.ok) {
    throw new Error(`recommendations answered ${response.status}`);
  }
  return response.json();
}

async function fetchShipment(orderId) {
  const response = await fetch(`${SHIPPING_URL}/shipments/${encodeURIComponent(orderId)}`, {
    headers: { accept: 'application/json' },
  });
  if (response.status === 404) {
    return null;
  }
  return response.json();
}

module.exports = { fetchRecommendations, fetchShipment };
