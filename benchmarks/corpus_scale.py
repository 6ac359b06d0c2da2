"""The full guard vector (typed + union, exact matching; standard scores only in W2+scores) at
corpus scale, with the run-length backend (the audit's default) beside the dense frame-array
backend (the reference), each case in a fresh process for its own peak memory:

- W1: 1,000 clips × 3 classes × 10 s;  W2: 10,000 clips × 10 classes × 10 s (about 480k
  reference events); W2 again on a 1 ms grid (the run-length cost should not follow the
  frames); W2 with every standard score beside the vector (``W2+scores``).

Run: ``.venv/bin/python benchmarks/corpus_scale.py`` (``--case W2 --backend runs`` runs one
case in this process)."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

import numpy as np

from _rows import record

CASES = {"W1": (1000, 3, 0.02), "W2": (10_000, 10, 0.02), "W2-1ms": (10_000, 10, 0.001),
         "W2+scores": (10_000, 10, 0.02)}
SMOKE = {"W1": (20, 3, 0.02), "W2": (40, 10, 0.02), "W2-1ms": (40, 10, 0.001),
         "W2+scores": (40, 10, 0.02)}


def workload(clips: int, classes: int, seed: int = 0):
    """Per clip and class about 4.8 events of 0.3–1.5 s in 10 s; predictions jittered by
    ±60 ms at both ends, a tenth missed and a few false ones."""
    from sedcontract import EventList

    rng = np.random.default_rng(seed)
    n = clips * classes * 6
    clip = np.repeat(np.arange(clips), classes * 6)
    cls = np.tile(np.repeat(np.arange(classes), 6), clips)
    slot = np.tile(np.arange(6), clips * classes)
    onset = slot * (10 / 6) + rng.uniform(0, 0.1, n)
    offset = onset + rng.uniform(0.3, 1.5, n)
    keep = rng.random(n) < 0.8
    names = np.array([f"clip{i:05d}" for i in range(clips)])
    labels = np.array([f"class{k:02d}" for k in range(classes)])
    ref = EventList.from_rows(zip(names[clip[keep]], onset[keep], offset[keep],
                                  labels[cls[keep]], strict=True), clips=tuple(names))
    jitter = rng.normal(0, 0.06, (2, n))
    hit = keep & (rng.random(n) < 0.9)
    p_on = np.clip(onset + jitter[0], 0, 10)
    p_off = np.maximum(np.clip(offset + jitter[1], 0, 10), p_on + 0.04)
    false = ~keep & (rng.random(n) < 0.2)
    use = hit | false
    pred = EventList.from_rows(zip(names[clip[use]], p_on[use], p_off[use],
                                   labels[cls[use]], strict=True), clips=tuple(names))
    return ref, pred, {name: 10.0 for name in names}


def run_case(case: str, backend: str, smoke: bool, jobs: int = 1) -> None:
    import sedcontract

    clips, classes, hop = (SMOKE if smoke else CASES)[case]
    ref, pred, durations = workload(clips, classes)
    start = time.perf_counter()
    scores = sedcontract.ScoreSettings() if case.endswith("+scores") else None
    report = sedcontract.audit(ref, pred, durations=durations, hop=hop, scores=scores,
                               backend=backend, jobs=jobs)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{elapsed:.3f} {peak:.0f} {len(ref)} {report.logic('typed'):.6f} "
          f"{report.logic('union'):.6f}")


def record_rows(measured: dict[tuple[str, str, int], tuple[float, str, str, str, str]]) -> None:
    """The summary's rows: each run-length case beside the dense backend (W2+scores has no
    dense run), W2 on 2 processes beside one process; agreement: the logic values printed."""
    for (case, backend, jobs), (elapsed, peak, events, typed, union) in measured.items():
        if backend == "dense":
            continue
        tool, key = ("dense backend", (case, "dense", 1)) if jobs == 1 else \
            ("one process", (case, "runs", 1))
        label = f"{case}, {events} reference events" + (
            "" if jobs == 1 else f", {jobs} processes (peak: the parent)")
        if key not in measured:
            record("corpus_scale.py", label, f"{elapsed:.2f} s", memory=f"{peak} MB")
            continue
        their_elapsed, their_peak, _, their_typed, their_union = measured[key]
        agree = (typed, union) == (their_typed, their_union)
        record("corpus_scale.py", label, f"{elapsed:.2f} s", tool, f"{their_elapsed:.2f} s",
               f"{their_elapsed / elapsed:.1f}×", f"{peak} / {their_peak} MB",
               "typed and union logic equal" if agree else
               f"logic differs: typed {typed} vs {their_typed}, union {union} vs {their_union}")


def simulated_scaling(smoke: bool, counts: tuple[int, ...] = (1, 2, 4, 8, 16)
                      ) -> list[tuple[int, float, float, float]]:
    """W2 on N processes where N cores exist, *simulated* from its pieces measured one after
    another in this process (this machine has 2 cores): the parent's checks, each block made
    and pickled in turn, each block unpickled, audited and its report sent back, the join.
    A block starts once it is made (the processes start during the checks, as ``--jobs``
    starts them); the wall time is the checks, the last block to finish, and the join (one
    process: the corpus audited as it is, nothing pickled).
    Rows: N, simulated seconds, the parent's serial seconds, the longest block's seconds."""
    import pickle

    from sedcontract.blocks import clip_range
    from sedcontract.contracts.policy import policy_of
    from sedcontract.guard import pipeline as guard

    clips, classes, hop = (SMOKE if smoke else CASES)["W2"]
    ref, pred, durations = workload(clips, classes)
    policy = policy_of(None, hop=hop)
    start = time.perf_counter()
    ref = guard.events_of(ref, "ref")
    pred, policy = guard.system_events(ref, pred, policy, None)
    corpus = guard.check_corpus(ref, pred, policy, durations=durations)
    chosen = guard._coordinates(None, guard.clause_names(policy.parsed)[0])
    checks = time.perf_counter() - start
    rows = []
    for n in counts:
        made, work, reports = [], [], []
        for k in range(n):  # one process audits the corpus itself: nothing pickled
            start = time.perf_counter()
            block = corpus.block(*clip_range(len(corpus.clips), k, n))
            sent = pickle.dumps(block) if n > 1 else None
            made.append(time.perf_counter() - start)
            start = time.perf_counter()
            report = guard.audit_block(block if sent is None else pickle.loads(sent), policy,
                                       "both", chosen, "runs")
            reports.append(report if n == 1 else pickle.loads(pickle.dumps(report)))
            work.append(time.perf_counter() - start)
        start = time.perf_counter()
        guard.GuardReport.concat(reports)
        join = time.perf_counter() - start
        ready = np.cumsum(made)
        rows.append((n, checks + max(ready + np.array(work)) + join,
                     checks + float(ready[-1]) + join, max(work)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=list(CASES))
    parser.add_argument("--backend", choices=["runs", "dense"], default="runs")
    parser.add_argument("--jobs", type=int, default=1, help="processes (run-length backend)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the tests use it)")
    parser.add_argument("--scaling", action="store_true",
                        help="only the simulated scaling of W2 over 1-16 processes")
    args = parser.parse_args(argv)
    if args.case is not None:
        run_case(args.case, args.backend, args.smoke, args.jobs)
        return 0
    if args.scaling:
        print_scaling(args.smoke)
        return 0
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    print("| case | backend | events (ref) | time | peak RSS | typed logic | union logic |")
    print("|---|---|---|---|---|---|---|")
    results = {}
    measured = {}
    runs = [(case, backend, 1) for case in CASES for backend in ("runs", "dense")
            if not (case.endswith("+scores") and backend == "dense")]
    for case, backend, jobs in [*runs, ("W2", "runs", 2)]:
        command = [sys.executable, __file__, "--case", case, "--backend", backend,
                   "--jobs", str(jobs)]
        done = subprocess.run(command + (["--smoke"] if args.smoke else []),
                              capture_output=True, text=True, env=env)
        if done.returncode:
            print(f"| {case} | {backend} | failed: {done.stderr.strip()[-200:]} |")
            continue
        elapsed, peak, events, typed, union = done.stdout.split()
        results[case, backend, jobs] = float(elapsed)
        measured[case, backend, jobs] = (float(elapsed), peak, events, typed, union)
        shown = backend if jobs == 1 else f"{backend}, {jobs} processes (peak: the parent)"
        print(f"| {case} | {shown} | {events} | {float(elapsed):.2f} s | {peak} MB | "
              f"{typed} | {union} |")
    for case in CASES:
        if (case, "runs", 1) in results and (case, "dense", 1) in results:
            ratio = results[case, "dense", 1] / results[case, "runs", 1]
            print(f"{case}: run-length backend {ratio:.1f}× faster than dense")
    if ("W2", "runs", 1) in results and ("W2-1ms", "runs", 1) in results:
        print(f"1 ms grid against 20 ms grid (run-length): "
              f"{results['W2-1ms', 'runs', 1] / results['W2', 'runs', 1]:.2f}×")
    record_rows(measured)
    print_scaling(args.smoke)
    return 0


def print_scaling(smoke: bool) -> None:
    """The simulated scaling table (:func:`simulated_scaling`), recorded for the summary."""
    rows = simulated_scaling(smoke)
    print("\nW2 on N processes where N cores exist, simulated from its pieces measured one "
          "after another in one process (not measured: this machine has "
          f"{os.cpu_count()} cores):\n")
    print("| processes | simulated wall s | parent's serial part s | longest block s | "
          "speed-up |\n|---|---|---|---|---|")
    for n, wall, serial, block in rows:
        print(f"| {n} | {wall:.2f} | {serial:.2f} | {block:.2f} | {rows[0][1] / wall:.2f}× |")
        record("corpus_scale.py", f"W2 on {n} processes (simulated)", f"{wall:.2f} s",
               "one process (simulated)", f"{rows[0][1]:.2f} s", f"{rows[0][1] / wall:.2f}×")


if __name__ == "__main__":
    sys.exit(main())
