"""Frame-formula throughput: sedcontract's exact monitor side by side with RTAMT's discrete-time
offline monitor on the same 100,000-frame traces; checks agreement on every frame and prints
the speed ratio. Run: ``make bench`` (or ``python benchmarks/frame_monitor.py``)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from functools import partial

import numpy as np

from _memory import peak_mb
from _rows import record
from sedcontract.contracts import evaluate_formula, parse_formula
from sedcontract.traces import offset, onset

FORMULAS = {
    "ref.onset -> N[10] pred.onset":
        "((ref_onset > 0.5) implies (once[0:10] (pred_onset > 0.5) or "
        "eventually[0:10] (pred_onset > 0.5)))",
    "pred.active U[0:20] ref.offset": "((pred_active > 0.5) until[0:20] (ref_offset > 0.5))",
}


def activity(rng: np.random.Generator, n: int, mean_on: int, mean_off: int) -> np.ndarray:
    """Alternating runs of activity and silence with geometric lengths (frames)."""
    out = np.zeros(n, dtype=bool)
    t, on = 0, bool(rng.integers(2))
    while t < n:
        length = int(rng.geometric(1 / (mean_on if on else mean_off)))
        out[t:t + length] = on
        t, on = t + length, not on
    return out


def traces(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = activity(rng, n, mean_on=60, mean_off=90)
    # a prediction: the reference with jittered boundaries, some misses and false alarms
    pred = np.roll(ref, int(rng.integers(-5, 6))) ^ (activity(rng, n, 8, 400))
    return {"ref.active": ref, "pred.active": pred,
            "ref.onset": onset(ref), "ref.offset": offset(ref),
            "pred.onset": onset(pred), "pred.offset": offset(pred)}


def rtamt_run(spec_text: str, signals: dict[str, np.ndarray]) -> tuple[np.ndarray, float]:
    import rtamt

    spec = rtamt.StlDiscreteTimeOfflineSpecification()
    for name in signals:
        spec.declare_var(name.replace(".", "_"), "float")
    spec.spec = spec_text
    spec.parse()
    data = {"time": list(range(len(signals["ref.active"])))}
    data.update({k.replace(".", "_"): v.astype(float).tolist() for k, v in signals.items()})
    start = time.perf_counter()
    result = spec.evaluate(data)
    elapsed = time.perf_counter() - start
    return np.array([r > 0 for _, r in result]), elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=20, help="timed runs of our monitor")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run that only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.frames, args.repeats = 300, 1
    signals = traces(args.frames, args.seed)
    print(f"traces: {args.frames} frames, reference activity {signals['ref.active'].mean():.2f}")
    print(f"{'formula':34s} {'sedcontract':>12s} {'RTAMT':>10s} {'ratio':>8s}  "
          f"{'peak MB (ours / RTAMT)':>23s}  agree")
    ok = True
    for ours_text, rtamt_text in FORMULAS.items():
        formula = parse_formula(ours_text)
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            ours = evaluate_formula(formula, signals)
            times.append(time.perf_counter() - start)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs, rtamt_time = rtamt_run(rtamt_text, signals)
        agree = bool(np.array_equal(ours, theirs))
        ok &= agree
        ours_time = statistics.median(times)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            memory = (f"{peak_mb(partial(evaluate_formula, formula, signals)):.1f} / "
                      f"{peak_mb(partial(rtamt_run, rtamt_text, signals)):.1f}")
        print(f"{ours_text:34s} {ours_time * 1e3:10.2f}ms {rtamt_time:9.2f}s "
              f"{rtamt_time / ours_time:7.0f}x  {memory:>23s}  "
              f"{'every frame' if agree else 'DISAGREE'}")
        record("frame_monitor.py", f"{ours_text} ({args.frames} frames)",
               f"{ours_time * 1e3:.2f} ms", "RTAMT", f"{rtamt_time:.2f} s",
               f"{rtamt_time / ours_time:.0f}×", f"{memory} MB",
               "every frame" if agree else "DISAGREE")
    print("sedcontract time: median of repeats, including atom lookup; RTAMT time: its "
          "evaluate() call alone (parsing excluded). Peak MB: tracemalloc, a separate untimed "
          "call (RTAMT's includes parsing).")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
