"""PSDS from operating-point tables: sedcontract's psds_eval rule side by side with psds_eval
0.5.3 itself (in its own environment, .venv-oracle, which `make test` makes) on the same tables
in one run — by default the DCASE baseline's 50 operating points on DESED validation (1168
clips, 10 classes), both DCASE scenarios; each timed on tables already read, with the time
split into reading the tables, the intersections (every point's counts) and the curves.
Run: ``.venv/bin/python benchmarks/psds_points.py``."""

from __future__ import annotations

import argparse
import json
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from _rows import record
from sedcontract.scores.psds.operating_points import (
    point_rates,
    psd_roc,
    psds_of_points,
    read_points,
)
from sedcontract.scores.psds.roc import staircase_area
from sedcontract.scores.psds.settings import PRESETS
from sedcontract.traces import read_durations, read_events

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "real_dcase"
ORACLE = ROOT / ".venv-oracle" / "bin" / "python"
JOB = ROOT / "tests" / "oracles" / "psds_eval_job.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=50, help="operating points (of 50)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run that only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.points, args.repeat = 2, 1
    if not ORACLE.exists():
        print("psds_eval's environment .venv-oracle is missing (make test makes it): "
              "sedcontract alone")
    ref, durations = read_events(DATA / "validation.tsv"), read_durations(
        DATA / "validation_durations.tsv")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(DATA / "teacher" / "operating_points.tar.xz") as archive:
            archive.extractall(tmp, filter="data")
        tables = sorted((Path(tmp) / "teacher").glob("*.tsv"))
        tables = [tables[round(i * (len(tables) - 1) / max(1, args.points - 1))]
                  for i in range(args.points)]
        reading = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            points = read_points(tables)
            reading = min(reading, time.perf_counter() - start)
        print(f"Reading the {len(points)} tables: {reading:.3f} s (not in the times below).\n")
        print("| scenario | points | sedcontract s | (intersections s | curves s) | psds_eval s "
              "| ratio | PSDS (ours) | PSDS (psds_eval) |\n|---|---|---|---|---|---|---|---|---|")
        for name, settings in PRESETS.items():
            ours, value = float("inf"), 0.0
            counting = drawing = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                value = psds_of_points(points, ref, durations, {name: settings})[name]["value"]
                ours = min(ours, time.perf_counter() - start)
                start = time.perf_counter()  # the same work in its two parts
                rates, _ = point_rates(points, ref, durations, settings)
                middle = time.perf_counter()
                roc = psd_roc(rates, settings)
                staircase_area(roc["efpr"], roc["etpr"], settings.max_efpr)
                counting = min(counting, middle - start)
                drawing = min(drawing, time.perf_counter() - middle)
            theirs, their_value = float("nan"), float("nan")
            if ORACLE.exists():
                case = {"truth_path": str(DATA / "validation.tsv"),
                        "durations_path": str(DATA / "validation_durations.tsv"),
                        "point_paths": [str(t) for t in tables],
                        "settings": settings.as_dict()}
                answers = json.loads(subprocess.run(
                    [str(ORACLE), str(JOB)], input=json.dumps({"cases": [case] * args.repeat}),
                    capture_output=True, text=True, check=True).stdout)
                theirs = min(a["seconds"] for a in answers)
                their_value = answers[0]["value"]
            print(f"| {name} | {len(points)} | {ours:.3f} | {counting:.3f} | {drawing:.3f} | "
                  f"{theirs:.3f} | {theirs / ours:.1f}× | {value:.6f} | {their_value:.6f} |")
            oracle = ORACLE.exists()
            record("psds_points.py", f"{name}, {len(points)} operating points (tables read)",
                   f"{ours:.3f} s", "psds_eval",
                   f"{theirs:.3f} s" if oracle else "missing (.venv-oracle)",
                   f"{theirs / ours:.1f}×" if oracle else "—",
                   agreement=f"PSDS {value:.6f} vs {their_value:.6f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
