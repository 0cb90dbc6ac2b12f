"""Stock levels, in memory: the domain the gRPC and HTTP APIs share."""

from dataclasses import dataclass
from threading import Lock


@dataclass
class StockLevel:
    sku: str
    available: int


class OutOfStock(Exception):
    """Raised when a reservation asks for more than is available."""


class StockBook:
    def __init__(self, levels: dict[str, int]) -> None:
        self._levels = dict(levels)
        self._lock = Lock()

    def level(self, sku: str) -> StockLevel:
        with self._lock:
            return StockLevel(sku, self._levels.get(sku, 0))

    def reserve(self, sku: str, quantity: int) -> int:
        with self._lock:
            available = self._levels.get(sku, 0)
            if quantity > available:
                raise OutOfStock(f"{sku}: {quantity} requested, {available} available")
            self._levels[sku] = available - quantity
            return self._levels[sku]
