"""The hand-annotated NPBench run beside the unannotated one (issue 27: what observed
signatures compile must equal what annotations compile, at the same speed).

`npbench.py --annotated --compare RESULTS/npbench.md` appends `comparison(...)` to its
report: per kernel, whether each took the fast path, the sites/fns each compiled and
each one's time over NumPy's, read from the two reports' tables (so any earlier
unannotated report can be compared without rerunning it).
"""

from __future__ import annotations

import statistics

#: a ratio differs "beyond noise" when it is off by more than this share of the larger
#: and by more than NOISE_ABS (a shared 2-core machine: a few percent run to run)
NOISE = 0.15
NOISE_ABS = 0.05


def table(text: str) -> dict[str, dict[str, str]]:
    """kernel -> {column: cell} of a report's per-kernel table."""
    lines = [ln for ln in text.splitlines() if ln.startswith("| ")]
    if not lines:
        return {}
    head = [c.strip() for c in lines[0].strip().strip("|").split("|")]
    rows = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == len(head) and cells[0] != head[0]:
            rows[cells[0]] = dict(zip(head, cells, strict=True))
    return rows


def _fast(row: dict[str, str]) -> bool:
    cell = row.get("fast", "no")
    return bool(cell) and cell != "no" and not cell.startswith("no ")


def _ratio(row: dict[str, str]) -> float | None:
    try:
        return float(row.get("PPy x", ""))
    except ValueError:
        return None


def differences(a: dict[str, str], u: dict[str, str], sites: bool = True) -> list[str]:
    """What differs between a kernel's annotated row `a` and unannotated row `u`
    (their sites/fns only if `sites`: both reports counted them alike)."""
    out = []
    if _fast(a) != _fast(u):
        out.append("fast path")
    if sites and a.get("sites/fns") != u.get("sites/fns"):
        out.append("sites/fns")
    ra, ru = _ratio(a), _ratio(u)
    if ra is not None and ru is not None and abs(ra - ru) > max(NOISE_ABS, NOISE * max(ra, ru)):
        out.append("speed")
    return out


def comparison(annotated: str, unannotated: str, source: str) -> str:
    """The comparison section: `annotated`, `unannotated` are the two reports' texts,
    `source` names where the unannotated one came from."""
    from npbench import SPECIALIZED_COUNTS

    a_rows, u_rows = table(annotated), table(unannotated)
    names = [k for k in a_rows if k in u_rows]
    # an older report counted a specialized function's generic sites (speculative ones
    # the call did not run) and none of its specializations': not comparable
    sites = SPECIALIZED_COUNTS in unannotated
    note = (
        ""
        if sites
        else " Its sites/fns are not compared: that report counts a specialized "
        "function's generic sites, not its specializations' (as this one does)."
    )
    lines = [
        "## Annotated vs unannotated (observed signatures)",
        "",
        f"Unannotated: `{source}`. differs: the fast path taken in one run only, other "
        f"sites/fns, or a time ratio off by more than {NOISE:.0%} (and {NOISE_ABS}) "
        f"between the two runs, which the machine's load alone can do.{note}",
        "",
        "| kernel | fast (ann.) | fast (unann.) | sites/fns (ann.) | sites/fns (unann.) "
        "| x (ann.) | x (unann.) | differs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    differing = []
    for name in names:
        a, u = a_rows[name], u_rows[name]
        found = differences(a, u, sites)
        if found:
            differing.append(f"{name} ({', '.join(found)})")
        cells = [
            name,
            "yes" if _fast(a) else "no",
            "yes" if _fast(u) else "no",
            a.get("sites/fns", ""),
            u.get("sites/fns", ""),
            a.get("PPy x", ""),
            u.get("PPy x", ""),
            ", ".join(found),
        ]
        lines.append("| " + " | ".join(cells) + " |")

    def med(rows: dict[str, dict[str, str]]) -> str:
        values = [r for r in (_ratio(rows[k]) for k in names) if r is not None]
        return f"{statistics.median(values):.2f}" if values else "n/a"

    lines += [
        "",
        f"- Fast path: annotated {sum(_fast(a_rows[k]) for k in names)}/{len(names)}, "
        f"unannotated {sum(_fast(u_rows[k]) for k in names)}/{len(names)}; "
        f"median PPy/NumPy annotated {med(a_rows)}x, unannotated {med(u_rows)}x.",
        f"- Differ: {len(differing)} ({', '.join(differing) or 'none'}).",
    ]
    return "\n".join(lines) + "\n"


__all__ = ["comparison", "differences", "table"]
