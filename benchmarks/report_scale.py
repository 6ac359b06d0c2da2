"""``sedcontract report`` at DESED size, beside the audits that feed it: three systems on DESED
validation (1168 clips × 10 classes; the DCASE baseline's frame scores implied by its 50
operating points, thresholded at 0.5 and at 0.3, and the same scores three frames late), each
audited with the standard scores and the ranking metrics' draws (``audit --format csv
--with-scores --bootstrap 1000``), then the report of the three with 1000 resamples and a
baseline. Each command runs in a fresh process: its wall time (best of ``--repeat``) and its
peak resident memory (the child's ``ru_maxrss``).
Run: ``.venv/bin/python benchmarks/report_scale.py``."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# DESED validation and the DCASE baseline's operating points, the files the tests read
DATA = ROOT / "tests" / "data" / "real_dcase"
REF, DURATIONS = DATA / "validation.tsv", DATA / "validation_durations.tsv"

from _rows import record  # noqa: E402
from sedcontract.data.dcase_baseline import DESED_CLASSES as CLASSES  # noqa: E402
from sedcontract.data.dcase_baseline import FRAME as HOP  # noqa: E402
from sedcontract.data.dcase_baseline import implied_scores  # noqa: E402
from sedcontract.traces import read_durations  # noqa: E402

# runs the command given as arguments, then prints its peak resident set in kB
MEASURE = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
           "capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
SEDCONTRACT = [sys.executable, "-m", "sedcontract.cli"]


def measured(command: list[str], repeat: int) -> tuple[float, float]:
    """Best wall time in seconds and the peak resident memory in MB of ``command``."""
    best, peak = float("inf"), 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True,
                              text=True, check=False)
        elapsed = time.perf_counter() - start
        if done.returncode:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
        best, peak = min(best, elapsed), max(peak, int(done.stdout.split()[-1]) / 1024)
    return best, peak


def score_folders(root: Path, clips: int | None) -> tuple[Path, Path, Path, Path]:
    """The baseline's implied score files and a three-frame-late copy (``clips``: only the
    first ones, with their reference and durations), written as sed_scores_eval score files."""
    with tarfile.open(REF.parent / "teacher" / "operating_points.tar.xz") as archive:
        archive.extractall(root / "points", filter="data")
    scores = implied_scores(root / "points" / "teacher", list(read_durations(DURATIONS)))
    kept = list(scores)[:clips] if clips else list(scores)
    ref, durations = root / "ref.tsv", root / "durations.tsv"
    lines = REF.read_text().splitlines()
    ref.write_text("\n".join([lines[0], *(line for line in lines[1:]
                                          if line.split("\t")[0].removesuffix(".wav")
                                          in set(kept))]) + "\n")
    lines = DURATIONS.read_text().splitlines()
    durations.write_text("\n".join([lines[0], *(line for line in lines[1:]
                                                if line.split("\t")[0].removesuffix(".wav")
                                                in set(kept))]) + "\n")
    on_time, late = root / "scores", root / "late"
    for folder, shift in ((on_time, 0), (late, 3)):
        folder.mkdir()
        for clip in kept:
            table = scores[clip]
            moved = table if not shift else \
                [[0.0] * len(CLASSES)] * shift + [list(r) for r in table[:-shift]]
            (folder / f"{clip}.tsv").write_text(
                "\t".join(("onset", "offset", *CLASSES)) + "\n" + "".join(
                    f"{k * HOP:.3f}\t{(k + 1) * HOP:.3f}\t" + "\t".join(f"{v:g}" for v in row)
                    + "\n" for k, row in enumerate(moved)))
    return ref, durations, on_time, late


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run that only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    clips = None
    if args.smoke:
        args.resamples, args.repeat, clips = 20, 1, 40
    root = Path(tempfile.mkdtemp(prefix="report_scale_"))
    try:
        ref, durations, scores, late = score_folders(root, clips)
        print("| step | wall s | peak memory MB | output MB |\n|---|---|---|---|")
        rows = []
        for name, folder, threshold in (("th0.5", scores, "0.5"), ("th0.3", scores, "0.3"),
                                        ("late", late, "0.5")):
            out = root / f"{name}.csv"
            command = [*SEDCONTRACT, "audit", "--ref", str(ref), "--durations", str(durations),
                       "--clips", "durations", "--pred-scores", str(folder), "--threshold",
                       threshold, "--with-scores", "--bootstrap", str(args.resamples),
                       "--format", "csv", "--system", name, "--out", str(out)]
            wall, peak = measured(command, args.repeat)
            rows.append(str(out))
            print(f"| audit {name} (--bootstrap {args.resamples}) | {wall:.2f} | {peak:.0f} | "
                  f"{out.stat().st_size / 2**20:.1f} |")
            record("report_scale.py", f"audit {name} --with-scores --bootstrap "
                   f"{args.resamples}", f"{wall:.2f} s", memory=f"{peak:.0f} MB")
        report = root / "report"
        command = [*SEDCONTRACT, "report", *rows, "--out", str(report), "--baseline", "th0.5",
                   "--bootstrap", str(args.resamples)]
        wall, peak = measured(command, args.repeat)
        size = sum(p.stat().st_size for p in report.iterdir()) / 2**20
        print(f"| report of the 3 (--bootstrap {args.resamples}, --baseline) | {wall:.2f} | "
              f"{peak:.0f} | {size:.1f} |")
        record("report_scale.py", f"report of the 3 audits (--bootstrap {args.resamples}, "
               "--baseline)", f"{wall:.2f} s", memory=f"{peak:.0f} MB")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
