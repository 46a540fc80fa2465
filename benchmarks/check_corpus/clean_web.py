"""Clean: a pydantic model built within its constraints."""

from typing import Annotated

from pydantic import BaseModel, Field


class Order(BaseModel):
    count: Annotated[int, Field(ge=0, le=1000)]
    note: str = ""


def make(n: int) -> Order:
    return Order(count=3, note=f"{n} orders")
