"""What a DCASE participant runs while iterating, on DESED validation (1,168 clips; the DCASE
2024 baseline's frame scores as its operating points imply them, ``tests/data/real_dcase``),
each command in a fresh process, its wall and CPU time beside its goal:

- one system's report rows: ``audit --with-scores --bootstrap 1000 --format csv`` (goal 3 s);
- the report of three systems from their rows: ``report`` (goal 5 s);
- ``tune --objective intersection`` on the default grid (goal 10 s);
- ``certify`` for the speech gate's targets at δ 0.1 (goal 5 s; no other tool certifies SED
  thresholds);
- every DCASE metric from the scores: ``scores --pred-scores`` (PSDS1, PSDS2, collar,
  intersection and segment F1, mAUC, mpAUC; goal 3 s), beside sed_scores_eval computing the
  same metrics in a fresh process.

Run: ``.venv/bin/python -W ignore benchmarks/participant_loop.py`` (``--smoke``: 300 clips,
20 resamples)."""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _rows import record
from sedcontract.data.dcase_baseline import write_implied_scores
from sedcontract.traces import read_durations, read_events, write_durations, write_events

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "real_dcase"
CLI = [sys.executable, "-W", "ignore", "-m", "sedcontract.cli"]
GATE = ROOT / "src" / "sedcontract" / "examples" / "speech_gate.yaml"

REFERENCE = """
import sys, warnings
warnings.simplefilter("ignore")
import sed_scores_eval as s

ref, durations, folder = sys.argv[1:4]
scores = s.io.read_sed_scores(folder)
truth = {}
for clip, events in s.io.read_ground_truth_events(ref).items():  # it refuses overlaps
    merged = []
    for onset, offset, label in sorted(events, key=lambda e: (e[2], e[0])):
        if merged and merged[-1][2] == label and onset <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], offset)
        else:
            merged.append([onset, offset, label])
    truth[clip] = merged
seconds = s.io.read_audio_durations(durations)
for dtc, cttc, ct in ((0.7, None, 0.0), (0.1, 0.3, 0.5)):
    s.intersection_based.psds(scores, truth, seconds, dtc_threshold=dtc, gtc_threshold=dtc,
                              cttc_threshold=cttc, alpha_ct=ct, alpha_st=1.0, max_efpr=100)
s.collar_based.fscore(scores, truth, 0.5, onset_collar=0.2, offset_collar=0.2,
                      offset_collar_rate=0.2)
s.intersection_based.fscore(scores, truth, 0.5, dtc_threshold=0.5, gtc_threshold=0.5)
s.segment_based.fscore(scores, truth, seconds, 0.5, segment_length=1.0)
for max_fpr in (None, 0.1):
    s.segment_based.auroc(scores, truth, seconds, segment_length=1.0, max_fpr=max_fpr)
"""


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user and system, the process and its children) of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:6])} …: {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def corpus(folder: Path, clips: int | None) -> tuple[Path, Path, Path]:
    """DESED validation's reference, durations and the baseline's score files (the first
    ``clips`` clips, or all) written in ``folder``."""
    durations = read_durations(DATA / "validation_durations.tsv")
    keep = sorted(durations)[:clips] if clips else sorted(durations)
    ref = read_events(DATA / "validation.tsv")
    write_events(folder / "ref.tsv", ref.select(clips=keep))
    write_durations(folder / "durations.tsv", {c: durations[c] for c in keep})
    scores = write_implied_scores(folder / "all", DATA / "teacher" / "operating_points.tar.xz",
                                  DATA / "validation_durations.tsv")
    (folder / "scores").mkdir()
    for clip in keep:
        (scores / f"{clip}.tsv").rename(folder / "scores" / f"{clip}.tsv")
    return folder / "ref.tsv", folder / "durations.tsv", folder / "scores"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="300 clips, 20 resamples")
    args = parser.parse_args(argv)
    resamples = "20" if args.smoke else "1000"
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        ref, durations, scores = corpus(folder, 300 if args.smoke else None)
        given = ["--ref", str(ref), "--durations", str(durations), "--pred-scores", str(scores)]
        rows = []
        for system, threshold in (("a", "0.5"), ("b", "0.4"), ("c", "0.6")):
            rows.append(folder / f"{system}.csv")
            command = [*CLI, "audit", *given, "--with-scores", "--bootstrap", resamples,
                       "--threshold", threshold, "--system", system, "--format", "csv",
                       "--out", str(rows[-1])]
            if system == "a":
                row_times = timed(command)
            else:
                subprocess.run(command, check=True, capture_output=True)
        cases = [
            (f"one system's report rows (--bootstrap {resamples})", 3.0, row_times, None),
            ("the report of 3 systems", 5.0,
             timed([*CLI, "report", "--out", str(folder / "report"), *map(str, rows)]), None),
            ("tune --objective intersection", 10.0,
             timed([*CLI, "tune", *given, "--objective", "intersection", "--out",
                    str(folder / "decision.yaml")]), None),
            ("certify the speech gate at δ 0.1", 5.0,
             timed([*CLI, "certify", *given, "--targets", str(GATE), "--delta", "0.1",
                    "--out", str(folder / "gate.yaml")]), None),
            ("scores --pred-scores, every DCASE metric", 3.0,
             timed([*CLI, "scores", *given, "--format", "json", "--out",
                    str(folder / "scores.json")]),
             timed([sys.executable, "-c", REFERENCE, str(ref), str(durations), str(scores)])),
        ]
    print(f"DESED validation, {'300' if args.smoke else '1,168'} clips, each command in a fresh "
          "process (wall / CPU seconds)\n")
    print("| case | goal | sedcontract | met | sed_scores_eval, same metrics | ratio |")
    print("|---|---|---|---|---|---|")
    for case, goal, (wall, cpu), reference in cases:
        theirs = "—" if reference is None else f"{reference[0]:.2f} s / {reference[1]:.2f} s"
        ratio = "—" if reference is None else f"{reference[0] / wall:.1f}× faster"
        print(f"| {case} | ≤ {goal:g} s | {wall:.2f} s / {cpu:.2f} s | "
              f"{'yes' if wall <= goal else 'no'} | {theirs} | {ratio} |")
        record("participant_loop.py", f"{case} (goal ≤ {goal:g} s)", f"{wall:.2f} s",
               "sed_scores_eval" if reference else "—",
               "—" if reference is None else f"{reference[0]:.2f} s", ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
