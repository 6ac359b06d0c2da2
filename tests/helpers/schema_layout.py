"""The layout of every JSON report and CSV file the commands write, on one generated corpus
that fills every section (standard scores, PSDS, mAUC and mpAUC, bootstrap intervals, a paired
comparison, guard curves, a shard, a report folder with a baseline): JSON as the paths of its
keys with the kind of each value, the rows CSV as its columns and the kinds of row it holds,
each CSV table of the report folder as its columns. The pins live in ``tests/data/schema``, one
file per ``SCHEMA_VERSION``; ``python -m tests.helpers.schema_layout`` writes the current
version's pin and refuses to change a version already pinned."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from sedcontract.cli import main
from sedcontract.guard.rows import SCHEMA_VERSION
from sedcontract.traces import write_durations, write_events
from tests.helpers.paths import TEST_DATA
from tests.helpers.score_tables import corpus, write_tables

PINS = TEST_DATA / "schema"


def _kind(value: Any) -> str:
    return {dict: "object", list: "list", str: "text", bool: "bool", type(None): "null"}.get(
        type(value), "number")


def json_paths(value: Any, prefix: str = "") -> set[str]:
    """``path: kind`` of every value (list items share ``[]``; a number's digits in a key, as
    a resample's index, read as ``#``)."""
    out = {f"{prefix or '.'}: {_kind(value)}"}
    if isinstance(value, dict):
        for key, item in value.items():
            out |= json_paths(item, f"{prefix}.{re.sub(r'[0-9]+', '#', str(key))}")
    elif isinstance(value, list):
        for item in value:
            out |= json_paths(item, f"{prefix}[]")
    return out


def csv_kinds(text: str) -> list[str]:
    """The columns, then each kind of row: role, sort, coordinate and the clip's form."""
    rows = list(csv.DictReader(io.StringIO(text)))
    kinds = {" | ".join((r["role"], r["sort"], re.sub(r"[0-9]+", "#", r["coordinate"]),
                         r["clip"] if r["clip"] in ("*", "clip0") else
                         re.sub(r"[0-9]+", "#", r["clip"]))) for r in rows}
    return ["columns: " + ", ".join(rows[0]), *sorted(kinds)]


def _run(args: list[str]) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(args) == 0, args
    return out.getvalue()


def layouts() -> dict[str, list[str]]:
    """Each output's layout on the generated corpus."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        ref, tables, durations, _ = corpus(5, clips=6, n_classes=3, frames=40)
        _, other, _, _ = corpus(6, clips=6, n_classes=3, frames=40)
        write_events(root / "ref.tsv", ref.merged())
        write_durations(root / "durations.tsv", durations)
        mine, theirs = write_tables(root / "a", tables), write_tables(root / "b", other)
        base = ["--ref", str(root / "ref.tsv"), "--durations", str(root / "durations.tsv"),
                "--pred-scores", str(mine)]
        full = [*base, "--bootstrap", "20", "--compare-scores", str(theirs)]
        audit = ["audit", *full, "--with-scores", "--curves"]
        out = {"audit.json": sorted(json_paths(json.loads(_run([*audit, "--format", "json"])))),
               "scores.json": sorted(json_paths(json.loads(
                   _run(["scores", *full, "--format", "json"])))),
               "shard.json": sorted(json_paths(json.loads(_run(
                   ["audit", *base, "--curves", "--shard", "0/2", "--format", "json"])))),
               "audit.csv": csv_kinds(_run(["audit", *base, "--bootstrap", "20",
                                            "--with-scores", "--curves", "--format", "csv"]))}
        rows = []  # two systems' rows, then the report folder's tables (their columns)
        for system, folder in (("a", mine), ("b", theirs)):
            rows.append(str(root / f"{system}.csv"))
            _run(["audit", *base[:5], str(folder), "--bootstrap", "20", "--with-scores",
                  "--curves", "--system", system, "--format", "csv", "--out", rows[-1]])
        _run(["report", *rows, "--out", str(root / "report"), "--baseline", "a",
              "--bootstrap", "20", "--title", "layout"])
        for table in sorted((root / "report").glob("*.csv")):
            header = table.read_text().splitlines()[0]
            out[f"report/{table.name}"] = ["columns: " + header.replace(",", ", ")]
    return out


def pin_path(version: int = SCHEMA_VERSION) -> Path:
    return PINS / f"v{version}.json"


def write_pin() -> int:
    """Write the current version's pin; a version pinned with another layout is refused."""
    now = layouts()
    path = pin_path()
    if path.exists() and json.loads(path.read_text())["layouts"] != now:
        print(f"{path} pins another layout: bump SCHEMA_VERSION (sedcontract.guard.rows) and "
              "say what changed in docs/schema.md", file=sys.stderr)
        return 1
    PINS.mkdir(exist_ok=True)
    path.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "layouts": now}, indent=1)
                    + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(write_pin())
