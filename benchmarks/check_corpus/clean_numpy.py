"""Clean: ordinary NumPy code."""

from typing import Annotated

import numpy as np

import ppy


def blend(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.where(a > b, a * c, b - c)


def normalise(x: Annotated[np.ndarray, ppy.Shape("n", 3)]) -> np.ndarray:
    centred = x - x.mean(axis=0)
    return centred / (centred.std(axis=0) + 1e-12)


def energy(v: np.ndarray, m: float) -> float:
    return float(0.5 * m * np.sum(v * v)) + v.size + v.ndim
