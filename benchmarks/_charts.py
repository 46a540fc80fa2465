"""Charts for the benchmarks (matplotlib, headless), shared by the scripts and run_all.

* `bar_chart(path, title, labels, series)`: grouped bars, one group per label.
* `machine_note()`: the cores and load average a shared machine ran under.
* `publish(out, name, text, title, labels, series)`: print the tables, write
  `NAME.md`, draw `NAME.png` (a missing figure is drawn as 0).
* `chart_markdown(md, png)`: a chart of the first Markdown table in a benchmark's
  `.md` whose columns hold numbers (run_all draws one for every benchmark that wrote
  a table but no chart of its own).

Without matplotlib a chart is skipped with one line saying so; the tables stand alone.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

# A cell's leading number ("1.35", "2.1 ms", "1.35 · 7.1x": the first figure counts).
_NUMBER = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


def _pyplot():  # type: ignore[no-untyped-def]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (pip install -r benchmarks/requirements.txt)")
        return None
    return plt


def bar_chart(
    path: Path, title: str, labels: list[str], series: dict[str, list[float]], log: bool = False
) -> bool:
    """Grouped bars of `series` (name -> one value per label) into `path`; False if not drawn."""
    plt = _pyplot()
    if plt is None or not labels or not series:
        return False
    wide = min(16.0, max(6.0, 0.45 * len(labels) * len(series)))
    fig, ax = plt.subplots(figsize=(wide, 4.5))
    width = 0.8 / len(series)
    for k, (name, values) in enumerate(series.items()):
        xs = [i + k * width for i in range(len(labels))]
        ax.bar(xs, [v if math.isfinite(v) else 0.0 for v in values], width, label=name)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))], labels, fontsize=7)
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
    if log:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def machine_note() -> str:
    """What the figures ran on: a shared machine's figures move with its load."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"Machine: {os.cpu_count()} cores, load average {load} at the end of the run "
        "(a shared machine: figures move with the load)."
    )


def publish(
    out: Path,
    name: str,
    text: str,
    title: str,
    labels: list[str],
    series: dict[str, list[float | None]],
) -> None:
    """Print `text`, write it to `out/NAME.md` and chart `series` as `out/NAME.png`."""
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.md").write_text(text, encoding="utf-8")
    bars = {k: [v or 0.0 for v in vals] for k, vals in series.items()}
    bar_chart(out / f"{name}.png", title, labels, bars)


def _value(cell: str) -> float | None:
    match = _NUMBER.match(cell.replace("**", "").replace(",", ""))
    return float(match.group(0)) if match else None


def first_table(text: str) -> tuple[list[str], list[list[str]]] | None:
    """Header and rows of the first Markdown table in `text`, or None."""
    lines = [line.strip() for line in text.splitlines()]
    for i in range(len(lines) - 1):
        if lines[i].startswith("|") and re.match(r"^\|[\s:|-]+\|$", lines[i + 1]):
            header = [c.strip() for c in lines[i].strip("|").split("|")]
            rows = []
            for line in lines[i + 2 :]:
                if not line.startswith("|"):
                    break
                rows.append([c.strip() for c in line.strip("|").split("|")])
            return header, rows
    return None


def chart_markdown(md: Path, png: Path) -> bool:
    """Chart the numeric columns of `md`'s first table (rows labelled by the first column)."""
    table = first_table(md.read_text(encoding="utf-8"))
    if table is None:
        return False
    header, rows = table
    rows = [r for r in rows if len(r) == len(header)]
    numeric = [
        j
        for j in range(1, len(header))
        if rows
        and all(_value(r[j]) is not None for r in rows if r[j] not in ("", "-"))
        and any(_value(r[j]) is not None for r in rows)
    ]
    if not numeric:
        return False
    labels = [" ".join(r[: numeric[0]])[:40] for r in rows]
    series = {header[j]: [_value(r[j]) or 0.0 for r in rows] for j in numeric[:6]}
    positive = all(v > 0 for values in series.values() for v in values)
    spread = max(max(v) for v in series.values()) / max(min(min(v) for v in series.values()), 1e-12)
    return bar_chart(png, md.stem, labels, series, log=positive and spread > 100)


__all__ = ["bar_chart", "chart_markdown", "first_table"]
