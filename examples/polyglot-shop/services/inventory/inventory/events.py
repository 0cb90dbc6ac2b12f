"""Publishes `inventory.reserved` after each successful reservation (aiokafka)."""

import json
import os

from aiokafka import AIOKafkaProducer

INVENTORY_TOPIC = os.getenv("INVENTORY_TOPIC", "inventory.reserved")


class ReservationEvents:
    def __init__(self, bootstrap_servers: str) -> None:
        self._producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers)

    async def start(self) -> None:
        await self._producer.start()

    async def reserved(self, order_id: str, sku: str, remaining: int) -> None:
        payload = json.dumps({"order_id": order_id, "sku": sku, "remaining": remaining})
        await self._producer.send_and_wait(INVENTORY_TOPIC, payload.encode("utf-8"))

    async def stop(self) -> None:
        await self._producer.stop()
