"""The InventoryService gRPC servicer."""

import grpc

from inventory.events import ReservationEvents
from inventory.gen import inventory_pb2, inventory_pb2_grpc
from inventory.stock import OutOfStock, StockBook


class InventoryServicer(inventory_pb2_grpc.InventoryServiceServicer):
    """Reserves and reports stock; every reservation is announced on Kafka."""

    def __init__(self, book: StockBook, events: ReservationEvents) -> None:
        self._book = book
        self._events = events

    async def ReserveStock(self, request, context):
        try:
            remaining = self._book.reserve(request.sku, request.quantity)
        except OutOfStock:
            return inventory_pb2.ReserveStockResponse(reserved=False)
        await self._events.reserved(request.order_id, request.sku, remaining)
        return inventory_pb2.ReserveStockResponse(reserved=True, remaining=remaining)

    async def GetStock(self, request, context):
        if not request.sku:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "sku is required")
        level = self._book.level(request.sku)
        return inventory_pb2.StockLevel(sku=level.sku, available=level.available)
