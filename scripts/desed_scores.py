"""The DCASE 2024 baseline's frame scores on DESED validation, as its 50 operating points
(``tests/data/real_dcase/teacher/operating_points.tar.xz``) imply them, written as a folder of
score files (sed_scores_eval's layout, one per clip): the score folder the threshold-free
commands read (``sedcontract audit --pred-scores OUT --curves``, docs/curves.md).
Run: ``.venv/bin/python scripts/desed_scores.py OUT`` (OUT must not exist)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sedcontract.data.dcase_baseline import write_implied_scores

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "real_dcase"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to write (must not exist)")
    args = parser.parse_args(argv)
    if args.out.exists():
        print(f"desed_scores: {args.out} exists; name a new folder (nothing is overwritten)",
              file=sys.stderr)
        return 2
    folder = write_implied_scores(args.out, DATA / "teacher" / "operating_points.tar.xz",
                                  DATA / "validation_durations.tsv")
    print(f"wrote {len(list(folder.glob('*.tsv')))} score files to {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
