"""Seeded: a misspelled ndarray attribute; a reduction over an axis the array lacks."""

from typing import Annotated

import numpy as np

import ppy


def spread(x: np.ndarray) -> float:
    return float(x.shapee[0])  # expect: E1003


def column_totals(a: Annotated[np.ndarray, ppy.Shape("n", 3)]) -> np.ndarray:
    return np.sum(a, axis=2)  # expect: E1007
