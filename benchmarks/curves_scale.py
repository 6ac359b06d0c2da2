"""The guard vector at every threshold (``guard_curves``) side by side with the obvious
alternative, a loop of audits at 50 thresholds, on DESED validation (1168 clips × 10 classes:
the DCASE baseline's frame scores implied by its 50 operating points): both in one run on
tables already read, wall time (best of ``--repeat``) and peak traced memory, and the counts
compared at every one of the 50 thresholds (typed per class and union, every coordinate the
curves hold). With ``--audioset N``, the same on the AudioSet-strong shape of
``benchmarks/audioset_scale.py`` (N clips × 456 classes, 250 frames of full-precision scores a
clip): the curves of all N clips in a fresh process (time and peak resident memory), and the
loop of 50 audits beside the curves on a slice of them (``--audioset-slice``, counts compared).
Run: ``.venv/bin/python benchmarks/curves_scale.py [--audioset 17000]``."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# DESED validation and the DCASE baseline's operating points, the files the tests read
DATA = ROOT / "tests" / "data" / "real_dcase"
REF, DURATIONS = DATA / "validation.tsv", DATA / "validation_durations.tsv"

from benchmarks._memory import peak_mb  # noqa: E402
from benchmarks._rows import record  # noqa: E402

import sedcontract  # noqa: E402
from sedcontract.data.dcase_baseline import DESED_CLASSES as CLASSES  # noqa: E402
from sedcontract.data.dcase_baseline import FRAME as HOP  # noqa: E402
from sedcontract.data.dcase_baseline import implied_scores  # noqa: E402
from sedcontract.guard.curves import CURVE_COORDINATES, guard_curves  # noqa: E402
from sedcontract.traces import read_durations, read_events  # noqa: E402
from sedcontract.traces.decision import DecisionPolicy  # noqa: E402
from sedcontract.traces.given import TableMapping  # noqa: E402
from sedcontract.traces.score_files import ScoreTable, tables_to_events  # noqa: E402


def tables_of(clips: int | None) -> tuple[TableMapping, object, dict[str, float]]:
    """The implied score tables (``clips``: only the first ones), the reference and
    durations of those clips."""
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(REF.parent / "teacher" / "operating_points.tar.xz") as archive:
            archive.extractall(tmp, filter="data")
        scores = implied_scores(Path(tmp) / "teacher", list(read_durations(DURATIONS)))
    kept = list(scores)[:clips] if clips else list(scores)
    durations = {c: d for c, d in read_durations(DURATIONS).items() if c in set(kept)}
    ref = read_events(REF).select(clips=kept)
    frames = np.arange(len(next(iter(scores.values()))))
    tables = {c: ScoreTable(np.round(frames * HOP, 6), np.round((frames + 1) * HOP, 6),
                            CLASSES, scores[c], frames + 2) for c in kept}
    return TableMapping(tables), ref, durations


def loop(tables: TableMapping, ref, durations, thresholds) -> list:
    """One audit per threshold of the events the tables give there."""
    reports = []
    for t in thresholds:
        events = tables_to_events(tables.tables(), DecisionPolicy(threshold=float(t)), "scores")
        reports.append(sedcontract.audit(ref, events, durations=durations,
                                         classes=list(CLASSES)))
    return reports


def audioset_inputs(clips: int):
    """The AudioSet-shaped corpus of ``benchmarks/audioset_scale.py``: reference, its score
    tables (a table source made one clip at a time) and durations."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from audioset_scale import ScoreTables, corpus

    class Tables(ScoreTables):
        """The tables as ``guard_curves`` reads them: ``(clip, (table, source))``."""

        def tables(self, clips):
            for clip, table in zip(clips, self.stream(clips), strict=True):
                yield clip, (table, "synthetic")

        def select(self, clips):
            return Tables(self.pred, self.labels, self.seed, clips, self.dense)

    ref, pred, durations, labels = corpus(clips)
    return ref, Tables(pred, labels), durations, labels


def audioset_curves(clips: int) -> dict:
    """The curves of ``clips`` AudioSet-shaped clips in this process: seconds, peak resident
    MB, and how many change points they hold."""
    ref, tables, durations, _ = audioset_inputs(clips)
    start = time.perf_counter()
    curves = guard_curves(ref, tables, durations)
    seconds = time.perf_counter() - start
    changes = sum(len(c.values) for by in curves.typed.values() for c in by.values()) + \
        sum(len(c.values) for c in curves.union.values())
    return {"clips": clips, "seconds": seconds, "changes": changes,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def differing(curves, reports, thresholds, classes) -> int:
    """Counts of the curves that differ from the audits at the thresholds."""
    differ = 0
    for t, report in zip(thresholds, reports, strict=True):
        typed, union = curves.at(float(t)), curves.at(float(t), "union")
        for name in CURVE_COORDINATES:
            for c in classes:
                cell = report.modes["typed"].per_class(name)[c]
                differ += typed[name][c] != (cell.satisfied, cell.obligations)
            cell = report.modes["union"].micro(name)
            differ += union[name]["*"] != (cell.satisfied, cell.obligations)
    return differ


def audioset(clips: int, sliced: int, count: int) -> str:
    """The AudioSet-shape rows: the curves of every clip in a fresh process, and the curves
    beside the loop of ``count`` audits on the first ``sliced`` clips."""
    done = subprocess.run([sys.executable, "-W", "ignore", __file__, "--audioset-case",
                           str(clips)], capture_output=True, text=True, check=True)
    whole = json.loads(done.stdout.strip().splitlines()[-1])
    ref, tables, durations, labels = audioset_inputs(sliced)
    thresholds = np.round(np.linspace(0.01, 0.99, count), 4)
    start = time.perf_counter()
    curves = guard_curves(ref, tables, durations)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    reports = []
    for t in thresholds:
        events = tables_to_events(tables.tables(list(ref.clips)),
                                  DecisionPolicy(threshold=float(t)), "scores")
        reports.append(sedcontract.audit(ref, events, durations=durations, classes=labels))
    theirs = time.perf_counter() - start
    differ = differing(curves, reports, thresholds, labels)
    record("curves_scale.py", f"AudioSet shape, {whole['clips']} clips × {len(labels)} classes, "
           f"curves at every score ({whole['changes']:,} change points)",
           f"{whole['seconds']:.1f} s", memory=f"{whole['peak_mb']:.0f} MB (peak resident)")
    record("curves_scale.py", f"AudioSet shape, first {sliced} clips, {count} thresholds",
           f"{ours:.2f} s", f"a loop of {count} audits", f"{theirs:.2f} s",
           f"{theirs / ours:.1f}×", agreement=f"{differ} counts differing")
    return (f"| AudioSet shape, {whole['clips']} clips × {len(labels)} classes | every score "
            f"({whole['changes']:,} change points) | {whole['seconds']:.1f} | — | — | "
            f"{whole['peak_mb']:.0f} (peak resident) | — | — |\n"
            f"| AudioSet shape, first {sliced} clips | {count} | {ours:.2f} | {theirs:.2f} | "
            f"{theirs / ours:.1f}× | — | — | {differ} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thresholds", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run that only checks the script works (tests use it)")
    parser.add_argument("--audioset", type=int, default=0, metavar="N",
                        help="also the AudioSet-strong shape on N clips (17000: full size)")
    parser.add_argument("--audioset-slice", type=int, default=200, metavar="N",
                        help="clips of the AudioSet shape on which the loop of audits runs")
    parser.add_argument("--audioset-case", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.audioset_case:
        print(json.dumps(audioset_curves(args.audioset_case)))
        return 0
    clips = 30 if args.smoke else None
    if args.smoke:
        args.thresholds, args.repeat, args.audioset, args.audioset_slice = 3, 1, 12, 4
    tables, ref, durations = tables_of(clips)
    thresholds = np.round(np.linspace(0.01, 0.99, args.thresholds), 4)
    ours = theirs = float("inf")
    for _ in range(args.repeat):  # best of: the two measured alternately, side by side
        start = time.perf_counter()
        curves = guard_curves(ref, tables, durations)
        ours = min(ours, time.perf_counter() - start)
        start = time.perf_counter()
        reports = loop(tables, ref, durations, thresholds)
        theirs = min(theirs, time.perf_counter() - start)
    differ = differing(curves, reports, thresholds, CLASSES)
    our_mb = peak_mb(lambda: guard_curves(ref, tables, durations))
    their_mb = peak_mb(lambda: loop(tables, ref, durations, thresholds[:1]))
    print(f"| corpus | thresholds | curves s | loop of audits s | ratio | curves MB | one audit "
          f"MB | counts differing |\n|---|---|---|---|---|---|---|---|\n"
          f"| DESED validation, {len(ref.clips)} clips × {len(CLASSES)} classes | "
          f"{len(thresholds)} | {ours:.2f} | {theirs:.2f} | {theirs / ours:.1f}× | "
          f"{our_mb:.0f} | {their_mb:.0f} | {differ} |")
    record("curves_scale.py", f"DESED validation, {len(ref.clips)} clips × {len(CLASSES)} "
           f"classes, {len(thresholds)} thresholds", f"{ours:.2f} s",
           f"a loop of {len(thresholds)} audits", f"{theirs:.2f} s", f"{theirs / ours:.1f}×",
           f"{our_mb:.0f} / {their_mb:.0f} MB (one audit)", f"{differ} counts differing")
    if args.audioset:
        rows = audioset(args.audioset, min(args.audioset_slice, args.audioset),
                        args.thresholds)
        print(rows)
        differ += int(rows.rsplit("|", 2)[-2])
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
