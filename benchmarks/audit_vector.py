"""The whole standard guard vector (typed + union, exact matching, with diagnostics) side by
side with sed_eval's optimal-matching event F1 on the same events, in one run.

Workload: 1000 clips × 3 classes × 10 events, 10 s clips, 20 ms grid. Run:
``.venv/bin/python benchmarks/audit_vector.py`` (``make bench`` runs every benchmark).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

import sedcontract
from _memory import peak_mb
from _rows import record
from sedcontract.traces import EventList

CLASSES = ("speech", "tone", "burst")


def workload(clips: int, events: int, seed: int) -> tuple[EventList, EventList, dict]:
    """Reference events (non-overlapping per class) and a jittered, imperfect prediction."""
    rng = np.random.default_rng(seed)
    ref, pred = [], []
    for c in range(clips):
        clip = f"clip{c:04d}"
        for label in CLASSES:
            slots = np.sort(rng.choice(20, size=events, replace=False))  # 0.5 s slots
            for slot in slots:
                on = slot * 0.5 + rng.uniform(0.0, 0.1)
                off = on + rng.uniform(0.15, 0.38)
                ref.append((clip, round(on, 3), round(off, 3), label))
                if rng.random() < 0.1:
                    continue  # missed
                p_on = max(0.0, on + rng.normal(0, 0.08))
                p_off = min(10.0, max(p_on + 0.02, off + rng.normal(0, 0.1)))
                pred.append((clip, round(p_on, 3), round(p_off, 3), label))
            for _ in range(rng.poisson(1.0)):  # false alarms
                on = rng.uniform(0, 9.5)
                pred.append((clip, round(on, 3), round(on + rng.uniform(0.05, 0.3), 3), label))
    durations = {f"clip{c:04d}": 10.0 for c in range(clips)}
    return EventList.from_rows(ref), EventList.from_rows(pred), durations


def sed_eval_event_f1(ref: EventList, pred: EventList, matching: str) -> tuple[float, float]:
    """sed_eval's collar event F1 (DCASE settings), time spent in evaluate + results."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sed_eval

    def by_clip(events: EventList) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        for clip, on, off, label in events.to_rows():
            out.setdefault(clip, []).append({"file": clip, "event_onset": on,
                                             "event_offset": off, "event_label": label})
        return out

    refs, preds = by_clip(ref), by_clip(pred)
    start = time.perf_counter()
    metric = sed_eval.sound_event.EventBasedMetrics(
        event_label_list=list(CLASSES), t_collar=0.2, percentage_of_length=0.2,
        event_matching_type=matching)
    for clip in ref.clips:
        metric.evaluate(refs.get(clip, []), preds.get(clip, []))
    f1 = metric.results()["overall"]["f_measure"]["f_measure"]
    return time.perf_counter() - start, f1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=1000)
    parser.add_argument("--events", type=int, default=10, help="per class and clip")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run that only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.clips, args.events, args.repeats = 5, 2, 1
    ref, pred, durations = workload(args.clips, args.events, seed=0)
    print(f"workload: {args.clips} clips × {len(CLASSES)} classes, {len(ref)} reference and "
          f"{len(pred)} predicted events, 10 s clips, hop 0.02 s")
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        report = sedcontract.audit(ref, pred, durations=durations, matching="exact")
        times.append(time.perf_counter() - start)
    ours = min(times)
    theirs, f1 = sed_eval_event_f1(ref, pred, "optimal")
    print(f"sedcontract guard vector (typed + union, exact, 7 coordinates + 6 diagnostics): "
          f"{ours:.3f} s (best of {args.repeats})")
    print(f"sed_eval EventBasedMetrics(optimal) event F1 = {f1:.3f}: {theirs:.3f} s")
    print(f"ratio: {theirs / ours:.1f}x faster")
    ours_mb = peak_mb(lambda: sedcontract.audit(ref, pred, durations=durations, matching="exact"))
    theirs_mb = peak_mb(lambda: sed_eval_event_f1(ref, pred, "optimal"))
    print(f"peak memory (tracemalloc, separate untimed call): sedcontract {ours_mb:.1f} MB, "
          f"sed_eval {theirs_mb:.1f} MB")
    record("audit_vector.py", f"guard vector (typed + union, exact), {args.clips} clips; "
           "sed_eval: optimal event F1", f"{ours:.3f} s", "sed_eval", f"{theirs:.3f} s",
           f"{theirs / ours:.1f}×", f"{ours_mb:.1f} / {theirs_mb:.1f} MB",
           "— (different measures)")
    print("typed vector: " + ", ".join(f"{k} {v:.3f}" for k, v in report.vector("typed").items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
