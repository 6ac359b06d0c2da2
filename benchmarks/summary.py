"""The table ``make bench`` ends with: every row the benchmark scripts recorded (``_rows.py``),
one measured case a row beside its reference tool, in the order they ran.
Run: ``.venv/bin/python benchmarks/summary.py ROWS_FILE`` (``--smoke``: two example rows)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from _rows import FIELDS, record

HEADER = ("benchmark", "case", "sedcontract", "reference tool", "reference", "ratio",
          "peak memory (ours / reference)", "agreement")


def read_rows(path: Path) -> list[dict]:
    """The recorded rows in file order; a line that is not a JSON object stops with its file
    and line number, so a broken script's output is found at once."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise SystemExit(f"{path}, line {number}: not a JSON row ({error.msg})") from None
        if not isinstance(row, dict):
            raise SystemExit(f"{path}, line {number}: not a JSON object")
        rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    """The rows as one Markdown table (a "|" inside a cell escaped, a missing cell "—")."""
    def line(cells) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    body = [line(row.get(field, "—") for field in FIELDS) for row in rows]
    return "\n".join([line(HEADER), "|" + "---|" * len(HEADER), *body])


def smoke_rows() -> Path:
    """Two example rows in a temporary file (the caller removes it), written by ``record``."""
    handle, name = tempfile.mkstemp(suffix=".jsonl")
    os.close(handle)
    previous = os.environ.get("SEDCONTRACT_BENCH_ROWS")
    os.environ["SEDCONTRACT_BENCH_ROWS"] = name
    try:
        record("summary.py", "example, a reference tool", "0.10 s", "tool", "1.00 s", "10.0×",
               "1.0 / 2.0 MB", "equal")
        record("summary.py", "example, no reference tool", "2.00 s")
    finally:
        if previous is None:
            del os.environ["SEDCONTRACT_BENCH_ROWS"]
        else:
            os.environ["SEDCONTRACT_BENCH_ROWS"] = previous
    return Path(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="?", type=Path, help="the JSON lines the scripts wrote")
    parser.add_argument("--smoke", action="store_true",
                        help="two example rows from a temporary file (tests use it)")
    args = parser.parse_args(argv)
    if args.rows is None and not args.smoke:
        parser.error("give the rows file (SEDCONTRACT_BENCH_ROWS of the benchmark runs)")
    path = smoke_rows() if args.smoke else args.rows
    try:
        rows = read_rows(path) if path.exists() else []
    finally:
        if args.smoke:
            path.unlink()
    if not rows:
        print(f"no benchmark rows recorded in {path}")
        return 0
    print("\nSummary: every measured case beside its reference tool (ratio: the reference's "
          "figure over sedcontract's; above 1, sedcontract is faster or smaller).\n")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
