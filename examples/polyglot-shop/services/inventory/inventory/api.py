"""Read-only HTTP API over the stock book (FastAPI)."""

from fastapi import FastAPI, HTTPException

from inventory.stock import StockBook

app = FastAPI(title="inventory")
book = StockBook({"SKU-RED-MUG": 40, "SKU-BLUE-MUG": 12, "SKU-TEAPOT": 3})


@app.get("/stock/{sku}")
async def get_stock(sku: str) -> dict:
    level = book.level(sku)
    if level.available == 0:
        raise HTTPException(status_code=404, detail=f"no stock for {sku}")
    return {"sku": level.sku, "available": level.available}
