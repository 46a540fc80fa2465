"""Seeded: errors of plain Python any checker should find."""


def label(n: int) -> str:
    return n * 2  # expect: E1005


def join(name: str, weight: float) -> str:
    return name + weight  # expect: E1004
