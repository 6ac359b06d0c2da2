"""Peak memory of the audit on inputs that used to exhaust it: one clip with 50,000 events
per side, 100 clips × 200 classes, and one score file of 10⁷ frames (0.23 GB of text); and of
the safe reader of user YAML and JSON files at its limits (1 MiB, 32 levels deep). Each
case runs in a fresh process (its peak RSS is its own); ``--case`` runs one case here,
optionally under an address-space limit (the memory test does that). Run:
``.venv/bin/python benchmarks/hostile_memory.py``."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

import numpy as np

from _rows import record

CASES = ("events", "classes", "scores", "documents")


def workload(case: str, size: int, seed: int = 0):
    """``events``: one clip, ``size`` events per side (a 0.1 s event every 0.2 s, predictions
    jittered); ``classes``: 100 clips × ``size`` classes, one 1 s event per class and clip."""
    from sedcontract import EventList

    rng = np.random.default_rng(seed)
    if case == "events":
        starts = np.arange(size) * 0.2 + rng.uniform(0, 0.05, size)
        moved = np.maximum(starts + rng.normal(0, 0.02, size), 0)
        ref = EventList.from_rows([("long", float(s), float(s) + 0.1, "x") for s in starts])
        pred = EventList.from_rows([("long", float(s), float(s) + 0.12, "x") for s in moved])
        return ref, pred
    rows = [(f"clip{c:03d}", float(on), float(on) + 1.0, f"class{k:03d}")
            for c in range(100) for k, on in enumerate(rng.uniform(0, 8, size))]
    ref = EventList.from_rows(rows)
    pred = EventList.from_rows([(c, on + 0.05, off, k) for c, on, off, k in rows])
    return ref, pred


def score_file(folder: str, frames: int) -> tuple[object, str]:
    """One clip's score file of ``frames`` 20 ms frames (one class, a 0.9 burst every 20 s)
    in ``folder``, and its reference; the folder is what ``--pred-scores`` reads."""
    from sedcontract import EventList

    k = np.arange(frames)
    with open(os.path.join(folder, "long.tsv"), "w") as f:
        f.write("onset\toffset\tx\n")
        np.savetxt(f, np.c_[k * 0.02, (k + 1) * 0.02, 0.9 * (k % 1000 < 100)],
                   fmt=["%.2f", "%.2f", "%.1f"], delimiter="\t")
    starts = np.arange(0, frames * 0.02, 20.0)
    return EventList.from_rows([("long", float(s), float(s) + 2.0, "x") for s in starts]), folder


def run_case(case: str, size: int, limit_mb: int | None) -> int:
    """Audit one case (guard vector and standard scores) in this process; print its peak."""
    if limit_mb is not None:
        limit = limit_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import sedcontract
    from sedcontract.guard import ScoreSettings

    if case == "documents":
        return read_documents(size)
    if case == "scores":
        import tempfile

        from sedcontract.traces.score_files import DecisionPolicy, scores_to_events

        with tempfile.TemporaryDirectory() as folder:
            ref, _ = score_file(folder, size)
            text = os.path.getsize(os.path.join(folder, "long.tsv")) / 2**20
            start = time.perf_counter()
            pred = scores_to_events(folder, DecisionPolicy(), ref.clips)
            report = sedcontract.audit(ref, pred, scores=ScoreSettings())
            elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"scores: one file of {size:,} frames ({text:.0f} MB of text, "
              f"{size * 3 * 8 / 2**20:.0f} MB as numbers) read and audited with scores in "
              f"{elapsed:.2f} s, peak RSS {peak:.0f} MB; collar event F1 "
              f"{report.scores['event'].overall.f1:.3f}")
        record("hostile_memory.py", f"one score file of {size:,} frames, read and audited "
               "with scores", f"{elapsed:.2f} s", memory=f"{peak:.0f} MB")
        return 0
    ref, pred = workload(case, size)
    start = time.perf_counter()
    report = sedcontract.audit(ref, pred, scores=ScoreSettings())
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    typed = report.vector("typed")
    print(f"{case}: {len(ref)} + {len(pred)} events, {len(ref.clips)} clips × "
          f"{len(report.traces['classes'])} classes: audit with scores {elapsed:.2f} s, "
          f"peak RSS {peak:.0f} MB; onset {typed['onset']:.3f}, collar event F1 "
          f"{report.scores['event'].overall.f1:.3f}")
    record("hostile_memory.py", f"{case}: {len(ref)} + {len(pred)} events, {len(ref.clips)} "
           f"clips × {len(report.traces['classes'])} classes, audit with scores",
           f"{elapsed:.2f} s", memory=f"{peak:.0f} MB")
    return 0


def read_documents(size: int) -> int:
    """A YAML and a JSON file of ``size`` bytes at the reader's depth limit (a list of numbers
    inside 31 lists), each read in this process, JSON first; print the time and the peak so
    far."""
    import tempfile
    from pathlib import Path

    from sedcontract.traces.documents import MAX_DEPTH, read_json, read_yaml

    inner = ", ".join(["1234567"] * (size // 9))
    nested = "[" * (MAX_DEPTH - 1) + inner + "]" * (MAX_DEPTH - 1)
    with tempfile.TemporaryDirectory() as folder:
        # JSON first: the peak is the process's so far, so the lighter reader is read alone
        for kind, text, read in (("JSON", f'{{"a": {nested}}}', read_json),
                                 ("YAML", f"a: {nested}\n", read_yaml)):
            path = Path(folder) / f"file.{kind.lower()}"
            path.write_text(text)
            start = time.perf_counter()
            read(path, "benchmark file", max_bytes=None)
            elapsed = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"documents: a {kind} file of {len(text):,} bytes, {MAX_DEPTH} levels deep, "
                  f"read in {elapsed:.2f} s, peak RSS {peak:.0f} MB")
            record("hostile_memory.py", f"a {kind} user file of {len(text):,} bytes at the "
                   f"reader's depth limit", f"{elapsed:.2f} s", memory=f"{peak:.0f} MB")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=CASES, default=None, help="run one case here")
    parser.add_argument("--size", type=int, default=None,
                        help="events per side (events), classes (classes), frames (scores) or "
                             "bytes (documents)")
    parser.add_argument("--limit-mb", type=int, default=None,
                        help="address-space limit for --case (MiB)")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes that only check the script works (tests use it)")
    args = parser.parse_args(argv)
    sizes = {"events": 200, "classes": 5, "scores": 5000, "documents": 10_000} if args.smoke \
        else {"events": 50_000, "classes": 200, "scores": 10_000_000, "documents": 1_000_000}
    if args.case is not None:
        return run_case(args.case, args.size or sizes[args.case], args.limit_mb)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    base = subprocess.run([sys.executable, "-c", "import resource, sedcontract; print("
                           "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"],
                          capture_output=True, text=True, env=env, check=True)
    print(f"import sedcontract alone: peak RSS {float(base.stdout):.0f} MB")
    record("hostile_memory.py", "import sedcontract alone", "—",
           memory=f"{float(base.stdout):.0f} MB")
    for case in CASES:
        result = subprocess.run([sys.executable, __file__, "--case", case, "--size",
                                 str(sizes[case])], capture_output=True, text=True, env=env)
        sys.stdout.write(result.stdout or result.stderr)
        if result.returncode:
            return result.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
