"""Exercises the servicer through a real channel (test code: left out of answers by default)."""

import grpc
import pytest

from inventory.gen import inventory_pb2, inventory_pb2_grpc
from inventory.events import INVENTORY_TOPIC


@pytest.mark.asyncio
async def test_reserve_more_than_available_is_refused(grpc_server_address):
    async with grpc.aio.insecure_channel(grpc_server_address) as channel:
        stub = inventory_pb2_grpc.InventoryServiceStub(channel)
        reply = await stub.ReserveStock(
            inventory_pb2.ReserveStockRequest(order_id="ord-1", sku="SKU-TEAPOT", quantity=99)
        )
        assert not reply.reserved


@pytest.mark.asyncio
async def test_reservation_is_announced(kafka_producer, grpc_server_address):
    await kafka_producer.send_and_wait(INVENTORY_TOPIC, b'{"order_id": "ord-fixture"}')
    assert INVENTORY_TOPIC == "inventory.reserved"
