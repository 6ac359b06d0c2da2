"""Headline rows for the one table ``make bench`` ends with (``benchmarks/summary.py``): each
script records the rows it prints as JSON lines in the file ``SEDCONTRACT_BENCH_ROWS`` names;
unset, nothing is written, so a script run alone prints only its own tables."""

from __future__ import annotations

import json
import os

FIELDS = ("benchmark", "case", "ours", "reference_tool", "reference", "ratio", "memory",
          "agreement")


def record(benchmark: str, case: str, ours: str, reference_tool: str = "—",
           reference: str = "—", ratio: str = "—", memory: str = "—",
           agreement: str = "—") -> None:
    """Append one measured case (every cell already formatted, units included) to the rows
    file; "—" where the script has no reference tool or figure."""
    path = os.environ.get("SEDCONTRACT_BENCH_ROWS")
    if not path:
        return
    cells = (benchmark, case, ours, reference_tool, reference, ratio, memory, agreement)
    with open(path, "a", encoding="utf-8") as rows:
        rows.write(json.dumps(dict(zip(FIELDS, cells, strict=True)), ensure_ascii=False) + "\n")
