"""Runs the gRPC server (port 50051) and the HTTP API (port 8000) in one process."""

import asyncio
import os

import grpc
import uvicorn

from inventory.api import app, book
from inventory.events import ReservationEvents
from inventory.gen import inventory_pb2_grpc
from inventory.servicer import InventoryServicer


async def serve() -> None:
    events = ReservationEvents(os.getenv("KAFKA_BROKERS", "kafka:9092"))
    await events.start()
    server = grpc.aio.server()
    inventory_pb2_grpc.add_InventoryServiceServicer_to_server(InventoryServicer(book, events), server)
    server.add_insecure_port("[::]:50051")
    await server.start()
    http = uvicorn.Server(uvicorn.Config(app, host="0.0.0.0", port=8000))
    try:
        await asyncio.gather(server.wait_for_termination(), http.serve())
    finally:
        await events.stop()


if __name__ == "__main__":
    asyncio.run(serve())
