"""Seeded: constants outside `Field` constraints, in both spellings."""

from typing import Annotated

from pydantic import BaseModel, Field


class Order(BaseModel):
    count: Annotated[int, Field(ge=0)]
    percent: int = Field(ge=0, le=100)


def make() -> Order:
    return Order(count=-1, percent=50)  # expect: E1050


def make_too_much() -> Order:
    return Order(count=1, percent=101)  # expect: E1050
