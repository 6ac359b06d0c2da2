"""Evaluation at AudioSet-strong scale: a deterministic corpus of that shape (17,000 clips of
10 s, 456 classes with long-tailed frequencies, about 9 reference events a clip; a prediction
on the 40 ms frame grid with realistic errors: jitter, misses, confusions, fragments, false
alarms), and frame scores at 40 ms for the classes a clip's prediction touches plus a sparse
noise floor, made one clip at a time. Measured, each case in a fresh process for its own time
and peak memory:

- ``vector``: the full guard vector, typed and union (sedcontract);
- ``vector+f1``: the same with the standard scores beside it (collar, segment, frame,
  intersection and boundary F1), in one process and on a 2-process pool (``audit(executor=)``);
- ``psds``: PSDS1 and PSDS2 (cross-triggers on) from the score tables, read one clip at a time,
  in one process and on a 2-process pool (``psds(executor=)``);
- on slices of the clips (sed_scores_eval holds every table and every pair of classes), collar
  and segment F1 and PSDS1 / PSDS2 by sed_scores_eval from the same tables, against
  sedcontract's (the agreement is checked: F1 and PSDS to 1e-9). The slice grows until a case
  passes the time cap or the memory limit;
- ``folder``: PSDS from a folder of score files at two sizes, to show that reading it costs
  one clip's tables, not the folder's;
- ``psds/dense``: PSDS1 and PSDS2 from dense scores (every class scored on every frame with
  full precision, as a sigmoid output is), in one process and on a 2-process pool, with score
  floors (``psds(floors=True)``: a first read of the tables' highest scores, then only what
  lies above each class's floor is counted; the same value, bit for bit);
- with ``--dense-slice N``: PSDS of dense scores on N clips, with and without floors, beside
  sed_scores_eval.

Run: ``.venv/bin/python -W ignore benchmarks/audioset_scale.py`` (2,000 clips, slices of 100
and 300: what ``make bench`` affords); ``--full`` for 17,000 clips, ``--slices 100,300,1000``
for more slices; ``--only psds/dense,psds/dense/2 processes`` for some cases of the first
table alone; ``--case NAME --clips N`` runs one case in this process."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

from _rows import record

FRAME = 0.04         # seconds: the score grid
CLIP = 10.0          # seconds per clip
FRAMES = round(CLIP / FRAME)
CASES = ("vector", "vector+f1", "vector+f1/2 processes", "psds", "psds/2 processes",
         "psds/dense", "psds/dense/2 processes", "sse_f1", "sse_psds", "folder")
TABLE = CASES[:7]  # the first table's cases, at the corpus's size
SCENARIOS = ("psds1", "psds2")


def corpus(clips: int, classes: int = 456, seed: int = 0):
    """Reference and predicted events, durations and the class names (AudioSet-style MIDs):
    class k drawn with probability ∝ 1 / (k + 1)^1.1; event lengths log-normal (median 1 s);
    predictions on the frame grid."""
    from sedcontract import EventList

    rng = np.random.default_rng(seed)
    names = np.array([f"Y{i:06d}" for i in range(clips)], dtype=object)
    labels = np.array([f"/m/0{k:05x}" for k in range(classes)], dtype=object)
    p = 1.0 / np.arange(1, classes + 1) ** 1.1
    p /= p.sum()
    counts = rng.poisson(9.0, clips)
    n = int(counts.sum())
    clip = np.repeat(np.arange(clips), counts)
    cls = rng.choice(classes, size=n, p=p)
    length = np.minimum(np.exp(rng.normal(0.0, 0.9, n)), CLIP)
    onset = np.round(rng.random(n) * (CLIP - length), 3)
    offset = np.round(onset + length, 3)
    # same-class events that overlap or touch joined, as strong labels are (and as
    # sed_scores_eval requires)
    ref = EventList(names[clip], onset, offset, labels[cls], clips=tuple(names)).merged()
    # prediction: 80 % found, jittered onto the grid; 5 % of them with a confused class; 8 %
    # cut in two by a 120 ms gap; about one false alarm a clip
    found = rng.random(n) < 0.8
    jitter = rng.normal(0, 0.08, (2, n))
    p_on = np.clip(np.round((onset + jitter[0]) / FRAME), 0, FRAMES)
    p_off = np.clip(np.round((offset + jitter[1]) / FRAME), 0, FRAMES)
    keep = found & (p_off > p_on)
    p_cls = np.where(rng.random(n) < 0.05, rng.choice(classes, size=n, p=p), cls)
    split = keep & (rng.random(n) < 0.08) & (p_off - p_on >= 8)
    middle = (p_on + p_off) // 2
    false = rng.poisson(1.0, clips)
    f_clip = np.repeat(np.arange(clips), false)
    f_len = np.clip(np.round(np.exp(rng.normal(-0.5, 0.8, int(false.sum()))) / FRAME), 1,
                    FRAMES - 1)
    f_on = np.floor(rng.random(len(f_len)) * (FRAMES - f_len))
    rows = (np.concatenate([clip[keep & ~split], clip[split], clip[split], f_clip]),
            np.concatenate([p_on[keep & ~split], p_on[split], middle[split] + 3, f_on]),
            np.concatenate([p_off[keep & ~split], middle[split], p_off[split], f_on + f_len]),
            np.concatenate([p_cls[keep & ~split], p_cls[split], p_cls[split],
                            rng.choice(classes, size=len(f_len), p=p)]))
    # runs of frames, as a detector's thresholded scores give them (overlaps joined)
    pred = EventList(names[rows[0]], rows[1] * FRAME, rows[2] * FRAME, labels[rows[3]],
                     clips=tuple(names)).merged()
    return ref, pred, dict.fromkeys(names.tolist(), CLIP), labels.tolist()


class ScoreTables:
    """The score tables of the corpus, each made when asked for (the same table every time):
    0.55–0.95 inside the clip's predicted events, 0.05–0.45 elsewhere on the classes its
    prediction touches, a noise floor of 0.01–0.3 on 3 frames of 5 other classes, zeros else;
    with ``dense``, every frame of every class at least a uniform 0–0.05 (as a sigmoid output
    scores every class). A table source for ``psds``: ``select`` a block of clips, ``stream``
    their tables."""

    def __init__(self, pred, labels: list[str], seed: int = 1, clips=None,
                 dense: bool = False):
        self.pred, self.labels, self.seed, self.dense = pred, list(labels), seed, dense
        self.clips = list(pred.clips if clips is None else clips)
        self.index = {c: k for k, c in enumerate(self.labels)}
        self.number = {c: k for k, c in enumerate(pred.clips)}
        self.rows: dict[str, list[int]] = {}
        for i, c in enumerate(pred.clip.tolist()):
            self.rows.setdefault(c, []).append(i)

    def __contains__(self, clip) -> bool:
        return clip in self.number

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.labels)

    def scores(self, clip: str) -> np.ndarray:
        rng = np.random.default_rng([self.seed, self.number[clip]])
        pred = self.pred
        scores = np.zeros((FRAMES, len(self.labels)))
        mine = self.rows.get(clip, [])
        touched = sorted({self.index[pred.label[i]] for i in mine})
        scores[:, touched] = rng.uniform(0.05, 0.45, (FRAMES, len(touched)))
        for i in mine:
            a, b = round(pred.onset[i] / FRAME), round(pred.offset[i] / FRAME)
            scores[a:b, self.index[pred.label[i]]] = rng.uniform(0.55, 0.95, b - a)
        for k in rng.choice(len(self.labels), 5, replace=False):
            if k not in touched:
                scores[rng.choice(FRAMES, 3, replace=False), k] = rng.uniform(0.01, 0.3, 3)
        if self.dense:
            scores = np.maximum(scores, rng.uniform(0.0, 0.05, scores.shape))
        return scores

    def select(self, clips):
        return ScoreTables(self.pred, self.labels, self.seed, clips, self.dense)

    def stream(self, clips):
        from sedcontract.traces.score_files import ScoreTable

        frames = np.arange(FRAMES)
        onset, offset = np.round(frames * FRAME, 6), np.round((frames + 1) * FRAME, 6)
        for clip in clips:
            yield ScoreTable(onset, offset, tuple(self.labels), self.scores(clip), frames + 2)


def sse_inputs(ref, pred, labels, durations, dense: bool = False):
    """sed_scores_eval's inputs: score DataFrames, ground truth (merged), durations."""
    from sed_scores_eval.base_modules.scores import create_score_dataframe

    from sedcontract.scores.psds.settings import ground_truth

    times = np.round(np.arange(FRAMES + 1) * FRAME, 6)
    tables = ScoreTables(pred, labels, dense=dense)
    scores = {clip: create_score_dataframe(tables.scores(clip), times, labels)
              for clip in pred.clips}
    return scores, ground_truth(ref), durations


def write_folder(folder, tables: ScoreTables) -> None:
    """The tables as a folder of score files (sed_scores_eval's layout)."""
    folder.mkdir()
    times = np.round(np.arange(FRAMES + 1) * FRAME, 6)
    for clip in tables.clips:
        values = np.column_stack([times[:-1], times[1:], tables.scores(clip)])
        np.savetxt(folder / f"{clip}.tsv", values, fmt="%.6g", delimiter="\t",
                   header="\t".join(("onset", "offset", *tables.labels)), comments="")


def present(ref, pred, labels):
    """The classes with reference events, and the prediction restricted to them:
    sed_scores_eval evaluates only classes that have ground-truth events."""
    kept = [c for c in labels if c in set(ref.label.tolist())]
    return pred.select(classes=kept), kept


def run_case(case: str, clips: int, sliced: bool = False, dense: bool = False,
             floors: bool = True) -> dict:
    """One case in this process: seconds, peak resident MB, and its result (``sliced``: the
    classes sed_scores_eval can evaluate on these clips, for the side-by-side; PSDS always
    scores those, as a class without reference events has no TPR; dense scores counted with
    score floors unless ``floors`` is false)."""
    import sedcontract
    from sedcontract.scores.psds.request import psds
    from sedcontract.scores.psds.settings import PRESETS

    ref, pred, durations, labels = corpus(clips)
    if sliced or case.startswith(("sse", "psds", "folder")):
        pred, labels = present(ref, pred, labels)
    scenarios = {name: PRESETS[name] for name in SCENARIOS}
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out: dict = {"case": case, "clips": clips, "ref": len(ref), "pred": len(pred),
                 "classes": len(labels)}
    start = time.perf_counter()
    if case.startswith("vector"):
        scores = sedcontract.ScoreSettings() if case.startswith("vector+f1") else None
        if case.endswith("processes"):  # the executor: blocks of clips on a process pool
            with pool() as executor:
                report = sedcontract.audit(ref, pred, durations=durations, classes=labels,
                                           scores=scores, executor=executor, blocks=4)
            out["worker_peak_mb"] = resource.getrusage(
                resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        else:
            report = sedcontract.audit(ref, pred, durations=durations, classes=labels,
                                       scores=scores)
        out["logic"] = [report.logic("typed"), report.logic("union")]
        if scores is not None:
            out["collar_f1"] = report.scores["event"].overall.f1
            out["segment_f1"] = report.scores["segment"].overall.f1
    elif case.startswith("psds"):
        dense = dense or case.startswith("psds/dense")
        tables = ScoreTables(pred, labels, dense=dense)
        floors_asked = {"floors": True} if dense and floors else {}  # else the default
        if case.endswith("processes"):
            with pool() as executor:
                result = psds(tables, ref, durations, scenarios, executor=executor, blocks=4,
                              **floors_asked)
            out["worker_peak_mb"] = resource.getrusage(
                resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        else:
            result = psds(tables, ref, durations, scenarios, **floors_asked)
        out["psds"] = [result[name]["value"] for name in SCENARIOS]
    elif case == "folder":
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as tmp:
            write_folder(Path(tmp) / "scores", ScoreTables(pred, labels))
            base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            start = time.perf_counter()
            result = psds(Path(tmp) / "scores", ref, durations, scenarios)
            out["psds"] = [result[name]["value"] for name in SCENARIOS]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from sed_scores_eval import collar_based, intersection_based, segment_based
        inputs = sse_inputs(ref, pred, labels, durations, dense)
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        start = time.perf_counter()
        if case == "sse_f1":
            f, *_ = collar_based.fscore(*inputs[:2], 0.5, onset_collar=0.2, offset_collar=0.2,
                                        offset_collar_rate=0.2)
            g, *_ = segment_based.fscore(*inputs, 0.5, segment_length=1.0)
            out["collar_f1"], out["segment_f1"] = f["micro_average"], g["micro_average"]
        else:
            out["psds"] = [intersection_based.psds(*inputs, **PRESETS[name].sed_scores_eval())[0]
                           for name in SCENARIOS]
    out["seconds"] = time.perf_counter() - start
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["input_mb"] = base
    return out


def result_of(row: dict) -> tuple:
    """What a case computed (to compare a pool's row with one process's)."""
    return tuple(row.get(k) for k in ("psds", "logic", "collar_f1", "segment_f1"))


def pool():
    """A pool of 2 fresh processes (spawned: nothing inherited)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    return ProcessPoolExecutor(2, mp_context=get_context("spawn"))


def measure(case: str, clips: int, cap: float, memory_gb: float,
            sliced: bool = False, dense: bool = False, floors: bool = True) -> dict | None:
    """``case`` in a fresh process under a time cap and a memory limit (None past either)."""
    limit = int(memory_gb * 2**30)

    def bound() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        done = subprocess.run([sys.executable, "-W", "ignore", __file__, "--case", case,
                               "--clips", str(clips), *(["--sliced"] if sliced else []),
                               *(["--dense"] if dense else []),
                               *([] if floors else ["--no-floors"])],
                              capture_output=True, text=True,
                              timeout=cap, preexec_fn=bound)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=CASES, help="run one case in this process")
    parser.add_argument("--clips", type=int, default=2000)
    parser.add_argument("--sliced", action="store_true",
                        help="with --case: only the classes that have reference events")
    parser.add_argument("--full", action="store_true", help="17,000 clips (AudioSet-strong)")
    parser.add_argument("--slices", default="100,300",
                        help="clip counts tried for sed_scores_eval, in order")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds per case at most")
    parser.add_argument("--memory", type=float, default=16.0, help="GB per case at most")
    parser.add_argument("--dense", action="store_true",
                        help="with --case: every class scored on every frame")
    parser.add_argument("--no-floors", action="store_true",
                        help="with --case: dense scores counted without score floors")
    parser.add_argument("--only", default="",
                        help="comma-separated cases of the first table: run those alone")
    parser.add_argument("--dense-slice", type=int, default=0,
                        help="also PSDS of dense scores (every class on every frame) on this "
                             "many clips, beside sed_scores_eval")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run that only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    if args.case is not None:
        print(json.dumps(run_case(args.case, args.clips, args.sliced, args.dense,
                                  not args.no_floors)))
        return 0
    clips = 17_000 if args.full else args.clips
    slices = [int(s) for s in args.slices.split(",")]
    if args.smoke:
        clips, slices = 30, [10]
    table = [c for c in args.only.split(",") if c] or list(TABLE)
    unknown = [c for c in table if c not in TABLE]
    if unknown:
        parser.error(f"--only: no case {unknown[0]!r} (the first table's: {', '.join(TABLE)})")
    rows = [measure(case, clips, args.cap, args.memory) for case in table]
    print(f"Corpus: {clips} clips × 456 classes × 10 s "
          f"({rows[0]['ref'] if rows[0] else '?'} reference events).\n")
    print("| case | clips | seconds | peak MB | result |\n|---|---|---|---|---|")
    for case, row in zip(table, rows, strict=True):
        if row is None:
            print(f"| sedcontract {case} (failed: time cap or memory limit) | | | | |")
            record("audioset_scale.py", f"{case}, {clips} clips", "failed (time cap or memory)")
            continue
        if "psds" in row:
            result = (f"PSDS1 {row['psds'][0]:.4f}, PSDS2 {row['psds'][1]:.4f} "
                      f"({row['classes']} classes with reference events)")
        else:
            result = f"logic typed {row['logic'][0]:.4f}, union {row['logic'][1]:.4f}"
        if "collar_f1" in row:
            result += f"; collar F1 {row['collar_f1']:.4f}, segment F1 {row['segment_f1']:.4f}"
        peak = f"{row['peak_mb']:.0f}" + (f" (each worker ≤ {row['worker_peak_mb']:.0f})"
                                          if "worker_peak_mb" in row else "")
        print(f"| sedcontract {row['case']} | {clips} | {row['seconds']:.2f} | {peak} | "
              f"{result} |")
        alone = dict(zip(table, rows, strict=True)).get(case.removesuffix("/2 processes"))
        pooled = case.endswith("processes") and alone is not None
        record("audioset_scale.py", f"{row['case']}, {clips} clips", f"{row['seconds']:.2f} s",
               "one process" if pooled else "—",
               f"{alone['seconds']:.2f} s" if pooled else "—",
               f"{alone['seconds'] / row['seconds']:.2f}×" if pooled else "—",
               memory=f"{row['peak_mb']:.0f} MB" + (f" (each worker ≤ {row['worker_peak_mb']:.0f}"
                                                    " MB)" if "worker_peak_mb" in row else ""),
               agreement="the same values" if pooled and result_of(alone) == result_of(row)
               else ("VALUES DIFFER" if pooled else "—"))
    if args.only:
        return 0
    print("\nOn slices (corpora of that many clips from the same generator; the classes with "
          "reference events there, as sed_scores_eval needs; dense score tables of 250 frames "
          "a clip):\n")
    print("| slice | F1: sedcontract s | F1: sed_scores_eval s | ratio | PSDS: sedcontract s | "
          "PSDS: sed_scores_eval s | ratio | peak MB (ours F1 / sse F1 / ours PSDS / sse PSDS) "
          "| agreement |\n|---|---|---|---|---|---|---|---|---|")
    largest: dict[str, tuple[int, dict]] = {}
    previous = 0
    for n in slices:
        ours = measure("vector+f1", n, args.cap, args.memory, sliced=True)
        f1 = measure("sse_f1", n, args.cap, args.memory)
        our_ps = measure("psds", n, args.cap, args.memory)
        ps = measure("sse_psds", n, args.cap, args.memory) if "psds" not in largest or \
            largest["psds"][0] == previous else None
        if ours is None or f1 is None or our_ps is None:
            print(f"| {n} | — | stopped (time cap {args.cap:g} s or {args.memory:g} GB) "
                  "| | | | | | |")
            record("audioset_scale.py", f"{n}-clip slice", "stopped (time cap or memory)")
            break
        agree = max(abs(ours["collar_f1"] - f1["collar_f1"]),
                    abs(ours["segment_f1"] - f1["segment_f1"]))
        psds_agree = None if ps is None else max(
            abs(a - b) for a, b in zip(our_ps["psds"], ps["psds"], strict=True))
        sse_ps = "stopped" if ps is None else f"{ps['seconds']:.2f}"
        ratio = "—" if ps is None else f"{ps['seconds'] / our_ps['seconds']:.0f}×"
        ps_mb = "—" if ps is None else f"{ps['peak_mb']:.0f}"
        agreement = f"F1 {agree:.1e}" + ("" if psds_agree is None else
                                         f", PSDS {psds_agree:.1e}")
        print(f"| {n} | {ours['seconds']:.2f} | {f1['seconds']:.2f} | "
              f"{f1['seconds'] / ours['seconds']:.1f}× | {our_ps['seconds']:.2f} | {sse_ps} | "
              f"{ratio} | {ours['peak_mb']:.0f} / {f1['peak_mb']:.0f} / "
              f"{our_ps['peak_mb']:.0f} / {ps_mb} | {agreement} |")
        record("audioset_scale.py", f"collar + segment F1, {n}-clip slice",
               f"{ours['seconds']:.2f} s", "sed_scores_eval", f"{f1['seconds']:.2f} s",
               f"{f1['seconds'] / ours['seconds']:.1f}×",
               f"{ours['peak_mb']:.0f} / {f1['peak_mb']:.0f} MB", f"F1 differ by {agree:.1e}")
        record("audioset_scale.py", f"PSDS1 + PSDS2, {n}-clip slice",
               f"{our_ps['seconds']:.2f} s", "sed_scores_eval",
               sse_ps + ("" if ps is None else " s"), ratio,
               f"{our_ps['peak_mb']:.0f} / {ps_mb} MB",
               "—" if psds_agree is None else f"PSDS differ by {psds_agree:.1e}")
        if agree > 1e-9 or (psds_agree is not None and psds_agree > 1e-9):
            print(f"the two tools differ: F1 by {agree:.3g}, PSDS by {psds_agree}")
            return 1
        largest["f1"] = (n, f1)
        if ps is not None:
            largest["psds"] = (n, ps)
        previous = n
    sizes = [max(slices[0], 10), 4 * max(slices[0], 10)]
    print("\nPSDS1 + PSDS2 from a folder of score files (one tsv per clip, the classes with "
          "reference events), read one clip at a time:\n")
    print("| clips | seconds | peak MB beyond the corpus |\n|---|---|---|")
    for n in sizes:
        row = measure("folder", n, args.cap, args.memory)
        if row is None:
            print(f"| {n} | stopped | |")
            continue
        print(f"| {n} | {row['seconds']:.2f} | {row['peak_mb'] - row['input_mb']:.0f} |")
        record("audioset_scale.py", f"PSDS1 + PSDS2 from a folder of {n} score files",
               f"{row['seconds']:.2f} s",
               memory=f"{row['peak_mb'] - row['input_mb']:.0f} MB beyond the corpus")
    if args.dense_slice:
        n = args.dense_slice
        floored = measure("psds", n, args.cap, args.memory, dense=True)
        every = measure("psds", n, args.cap, args.memory, dense=True, floors=False)
        theirs = measure("sse_psds", n, args.cap, args.memory, dense=True)

        def said(row: dict | None) -> str:
            return "stopped" if row is None else (
                f"{row['seconds']:.2f} s / {row['peak_mb']:.0f} MB "
                f"({row['seconds'] / (n * row['classes'] * FRAMES) * 1e6:.3f} µs per frame "
                "and class)")

        print(f"\nDense scores (every class on every frame) on {n} clips: sedcontract with "
              f"floors {said(floored)}, without floors {said(every)}, sed_scores_eval "
              + ("stopped" if theirs is None else
                 f"{theirs['seconds']:.2f} s / {theirs['peak_mb']:.0f} MB"))
        rows = [r for r in (floored, every, theirs) if r is not None]
        differ = None
        if len(rows) > 1:
            differ = max(abs(a - b) for r in rows[1:]
                         for a, b in zip(rows[0]["psds"], r["psds"], strict=True))
            print(f"PSDS max difference {differ:.1e}")
        agreement = "—" if differ is None else f"PSDS differ by {differ:.1e}"
        for row, how in ((floored, "with floors"), (every, "without floors")):
            if row is not None:
                record("audioset_scale.py", f"PSDS1 + PSDS2, dense scores, {n} clips, {how}",
                       f"{row['seconds']:.2f} s", "sed_scores_eval",
                       "stopped" if theirs is None else f"{theirs['seconds']:.2f} s",
                       "—" if theirs is None else f"{theirs['seconds'] / row['seconds']:.0f}×",
                       f"{row['peak_mb']:.0f} / "
                       + ("—" if theirs is None else f"{theirs['peak_mb']:.0f}") + " MB",
                       agreement)
        if differ is not None and differ > 1e-9:
            return 1
    if largest:
        print("\nExtrapolated (linear in clips, a statement, not a measurement) to "
              f"{clips} clips:")
        for key, what in (("f1", "collar+segment F1"), ("psds", "PSDS1+PSDS2")):
            if key in largest:
                n, row = largest[key]
                grown = (row["peak_mb"] - row["input_mb"]) * clips / n / 1024
                print(f"- sed_scores_eval {what} ≈ {row['seconds'] * clips / n:.0f} s and "
                      f"{grown:.1f} GB beyond its inputs (from the {n}-clip slice)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
