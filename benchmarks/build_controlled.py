"""Full controlled-benchmark build time (960 train + 120 validation + 420 test scenes, synthetic
speech) into a temporary folder, then the time of the no-op rebuild that verifies every hash.
Run: ``.venv/bin/python benchmarks/build_controlled.py``."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

from _rows import record
from sedcontract.data.build import build_controlled
from sedcontract.data.options import SPLITS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny build that only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    sizes = {"train": 2, "validation": 1, "test": 5} if args.smoke else dict(SPLITS)
    with tempfile.TemporaryDirectory() as root:
        start = time.perf_counter()
        result = build_controlled(root, seed=0, sizes=sizes, speech_source="synthetic",
                                  log=lambda _: None)
        build = time.perf_counter() - start
        start = time.perf_counter()
        build_controlled(root, seed=0, sizes=sizes, speech_source="synthetic",
                         log=lambda _: None)
        verify = time.perf_counter() - start
    scenes = sum(sizes.values())
    print(f"build: {scenes} scenes in {build:.1f} s ({scenes / build:.0f} scenes/s), "
          f"{result.written} audio files; verified rebuild: {verify:.1f} s; "
          f"manifest {result.manifest_hash[:12]}")
    record("build_controlled.py", f"build of {scenes} scenes", f"{build:.1f} s")
    record("build_controlled.py", f"verified rebuild of {scenes} scenes", f"{verify:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
