"""The issue's file: NumPy, torch, pydantic and FastAPI, with three seeded errors."""

from typing import Annotated

import numpy as np
import torch
from fastapi import FastAPI
from pydantic import BaseModel, Field

app = FastAPI()


class Order(BaseModel):
    count: Annotated[int, Field(ge=0)]


def make() -> Order:
    return Order(count=-1)  # expect: E1050


def width(x: np.ndarray) -> int:
    return x.shapee[0]  # expect: E1003


def act(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x, x, x)  # expect: E1006


@app.get("/orders")
def orders() -> int:
    return make().count
