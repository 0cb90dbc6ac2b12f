"""Inventory service: stock levels per SKU, over gRPC (InventoryService) and HTTP (FastAPI)."""
