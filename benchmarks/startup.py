"""Start-up time: wall time of ``import sedcontract`` and of ``sedcontract check standard`` (a
whole command), side by side with importing the reference tools sed_eval and
sed_scores_eval, each the median of fresh processes; then the slowest imports under
``import sedcontract`` (``python -X importtime``). Run:
``.venv/bin/python benchmarks/startup.py``."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from _rows import record
from _timing import wall

CLI = Path(sys.executable).with_name("sedcontract")


def slowest_imports(count: int) -> list[tuple[int, str]]:
    """``(cumulative µs, module)`` of the slowest imports under ``import sedcontract``."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import sedcontract"],
                            capture_output=True, text=True, check=True)
    rows = []
    for line in result.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--smoke", action="store_true",
                        help="one run each, which only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    repeats = 1 if args.smoke else args.repeats
    python = [sys.executable, "-W", "ignore", "-c"]
    ours = wall([*python, "import sedcontract"], repeats)
    check = wall([str(CLI), "check", "standard"], repeats)
    bare = wall([*python, "pass"], repeats)
    print(f"median of {repeats} fresh processes (python alone: {bare:.3f} s)")
    print(f"{'':34s} {'wall':>7s}")
    print(f"{'import sedcontract':34s} {ours:6.3f}s")
    print(f"{'sedcontract check standard':34s} {check:6.3f}s")
    for name in ("sed_eval", "sed_scores_eval"):
        theirs = wall([*python, f"import {name}"], repeats)
        print(f"{'import ' + name:34s} {theirs:6.3f}s  ({theirs / ours:.1f}x ours)")
        record("startup.py", f"import sedcontract (median of {repeats})", f"{ours:.3f} s",
               name, f"{theirs:.3f} s (import {name})", f"{theirs / ours:.1f}×")
    record("startup.py", f"sedcontract check standard (median of {repeats})", f"{check:.3f} s")
    print("slowest imports under `import sedcontract` (cumulative):")
    for micros, module in slowest_imports(6):
        print(f"  {micros / 1e3:7.1f} ms  {module.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
