"""Source rows of the held-out protocol's pages (:mod:`sedcontract.experiments`), written as
its CSV files: round 1's count rows, intervals and run record, and round 2's six tables."""

from __future__ import annotations

import csv
import json
from pathlib import Path

COORDINATES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")
QUANTITIES = [f"{c}/{m}/{q}" for c in ("onset", "offset", "missed", "false", "silence",
                                        "fragmentation") for m in ("typed", "union")
              for q in ("area", "at_10", "at_30", "at_100")] + ["psds1", "psds2"]


def write(path: Path, rows: list[dict]) -> None:
    """Rows as a CSV file, the header from the first row's keys."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


# -- round 1 (contract_losses) ------------------------------------------------------------------
def rows_of(benchmark: int, system: str, post: str, seed: int, satisfied: int) -> list[dict]:
    """One run's count rows: ``satisfied`` of 100 on every coordinate but silence (vacuous),
    ``2 · satisfied`` of 200 for each F1."""
    keys = {"benchmark": benchmark, "system": system, "seed": seed, "post": post}
    out = [{**keys, "mode": mode, "coordinate": c,
            "satisfied": satisfied if c != "silence" else 0,
            "obligations": 100 if c != "silence" else 0}
           for mode in ("typed", "union") for c in COORDINATES]
    out += [{**keys, "mode": "scores", "coordinate": k, "satisfied": 2 * satisfied,
             "obligations": 200} for k in ("event_f1", "segment_f1")]
    return out


def interval(benchmark: str, system: str, post: str, control_post: str, mode: str,
             coordinate: str, point: float, lo: float, hi: float) -> dict:
    """One interval row of ``system`` against BCE."""
    return {"benchmark": benchmark, "system": system, "post": post, "control": "bce_only",
            "control_post": control_post, "mode": mode, "coordinate": coordinate,
            "point": point, "lo": lo, "hi": hi, "level": 0.95, "defined": 100,
            "resamples": 100}


def heldout_tables(out: Path, onset: tuple[float, float, float]) -> list[dict]:
    """Round 1's held-out source files in ``out`` (benchmark 2, two seeds), every interval
    +0.03 [+0.02, +0.04] but the pooled typed onset of the bare contract arm (``onset``)."""
    rows = []
    for seed, base in ((0, 80), (1, 82)):
        rows += rows_of(2, "bce_only", "none", seed, base)
        rows += rows_of(2, "bce_only", "tuned", seed, base + 2)
        rows += rows_of(2, "contract", "none", seed, base + 3)
        rows += rows_of(2, "contract", "tuned", seed, base + 5)
    write(out / "contract_losses.csv", rows)
    write(out / "contract_losses_psds.csv",
          [{"benchmark": 2, "system": s, "seed": k, "psds1": v}
           for s, v in (("bce_only", 0.41), ("contract", 0.43)) for k in (0, 1)])
    write(out / "contract_losses_post.csv",
          [{"benchmark": 2, "system": "contract", "seed": 0, "median_filter": 0.12,
            "threshold": 0.4, "low": "", "validation_logic": 0.9}])
    ivs = [interval(where, "contract", post, control_post, mode, c, 0.03, 0.02, 0.04)
           for where in ("2", "pooled") for post, control_post in (("tuned", "tuned"),
                                                                    ("none", "tuned"))
           for mode in ("typed", "union") for c in (*COORDINATES, "logic", "event_f1")]
    for row in ivs:
        if (row["benchmark"], row["post"], row["mode"], row["coordinate"]) == \
                ("pooled", "none", "typed", "onset"):
            row["point"], row["lo"], row["hi"] = onset
    write(out / "contract_losses_intervals.csv", ivs)
    (out / "contract_losses_run.json").write_text(json.dumps({
        "command": "python scripts/contract_losses.py heldout", "split": "test",
        "contract": "rise", "wall_s": 3600, "commit": "abc", "choices_sha256": "0" * 64}))
    return ivs


def development_tables(out: Path) -> str:
    """Round 1's development source files in ``out``: two candidates, ``rise_w1`` ahead pooled
    and ``rise_boundary`` ahead on benchmark 0 only; the page's stem."""
    rows = []
    for system, base in (("bce_only", 80), ("rise_w1", 81), ("rise_boundary", 84)):
        for post in ("none", "tuned"):
            rows += rows_of(0, system, post, 0, base + (post == "tuned"))
    stem = "contract_losses_development"
    write(out / f"{stem}.csv", rows)
    write(out / f"{stem}_psds.csv", [{"benchmark": 0, "system": s, "seed": 0, "psds1": 0.5}
                                     for s in ("bce_only", "rise_w1", "rise_boundary")])
    write(out / f"{stem}_post.csv", [{"benchmark": 0, "system": "rise_w1", "seed": 0,
                                      "median_filter": 0, "threshold": 0.5, "low": 0.3,
                                      "validation_logic": 0.8}])
    ivs = []
    for system, point in (("rise_w1", 0.002), ("rise_boundary", 0.004)):
        ivs += [{**interval(where, system, "tuned", "tuned", "typed", "logic", point, -0.01,
                            0.02), "benchmark": where} for where in ("0", "pooled")]
    ivs[-1]["point"] = -0.001  # rise_boundary: ahead on benchmark 0, behind pooled
    write(out / f"{stem}_intervals.csv", ivs)
    (out / f"{stem}_run.json").write_text(json.dumps({
        "command": "python scripts/contract_losses.py develop", "split": "validation",
        "wall_s": 600}))
    return stem


# -- round 2 (contract_tradeoff) ----------------------------------------------------------------
def count_rows(system: str, post: str, satisfied: dict[str, int]) -> list[dict]:
    """One run's count rows on benchmark 0: ``satisfied`` (default 90) of 100 a coordinate."""
    keys = {"benchmark": 0, "system": system, "seed": 0, "post": post}
    out = [{**keys, "mode": mode, "coordinate": c, "satisfied": satisfied.get(c, 90),
            "obligations": 100} for mode in ("typed", "union") for c in COORDINATES]
    return out + [{**keys, "mode": "scores", "coordinate": k, "satisfied": 150,
                   "obligations": 200} for k in ("event_f1", "segment_f1")]


def op_interval(system: str, control: str, point: float, coordinate: str = "logic",
                post: str = "tuned", where: str = "pooled") -> dict:
    """One operating-point interval row, ``point`` ± 0.01."""
    return {"benchmark": where, "system": system, "post": post, "control": control,
            "control_post": post, "mode": "typed", "coordinate": coordinate, "point": point,
            "lo": point - 0.01, "hi": point + 0.01, "level": 0.95, "defined": 100,
            "resamples": 100}


def write_tables(out: Path, stem: str, *, gains: dict[int, float], reached: dict[str, int],
                 contrasts: dict[tuple, tuple[float, float, float]] | None = None,
                 split: str = "validation") -> None:
    """The six source files and the run record of a page, with the given finetuning gains
    (pooled typed logic with tuned post), targets-arm scores (of 100) and trade-off
    contrasts ``(system, control, reading, quantity) → (point, lo, hi)``."""
    systems = ["bce_only", "contract", "contract_targets", *(f"{a}_{k}" for k in gains
                                                            for a in ("finetuned",
                                                                      "bce_continued"))]
    rows = [r for s in systems for post in ("none", "tuned")
            for r in count_rows(s, post, reached if s == "contract_targets" else {})]
    write(out / f"{stem}_rows.csv", rows)
    write(out / f"{stem}_post.csv", [{"benchmark": 0, "system": s, "seed": 0,
                                      "median_filter": 0.06, "threshold": 0.5, "low": "",
                                      "validation_logic": 0.9} for s in systems])
    intervals = [op_interval(f"finetuned_{k}", f"bce_continued_{k}", g)
                 for k, g in gains.items()]
    write(out / f"{stem}_intervals.csv", intervals)
    write(out / f"{stem}_runs.csv", [{"benchmark": 0, "system": s, "seed": 0,
                                      "reading": "none", "quantity": q, "value": "0.5"}
                                     for s in systems for q in QUANTITIES])
    write(out / f"{stem}_systems.csv", [
        {"benchmark": where, "system": s, "reading": r, "quantity": q, "point": 0.5,
         "lo": 0.4, "hi": 0.6, "defined": 100, "resamples": 100}
        for where in ("0", "pooled") for s in systems for r in ("none", "tuned")
        for q in QUANTITIES])
    contrasts = contrasts or {}
    write(out / f"{stem}_contrasts.csv", [
        {"benchmark": "pooled", "system": s, "control": "bce_only", "reading": r,
         "quantity": q, **dict(zip(("point", "lo", "hi"),
                                   contrasts.get((s, "bce_only", r, q), (0.0, -0.01, 0.01)),
                                   strict=True)), "defined": 100, "resamples": 100}
        for s in systems if s != "bce_only" for r in ("none", "tuned") for q in QUANTITIES])
    (out / f"{stem}_run.json").write_text(json.dumps({
        "command": "python scripts/contract_tradeoff.py "
                   + ("develop" if split == "validation" else "heldout"),
        "split": split, "wall_s": 600, "runs": 28, "trained": 28, "training_s": 500,
        "commit": "0" * 40, "kernels": "CPU kernels: ATen AVX2"}))


HELDOUT_CONTRASTS = {  # round 2's goals: onset met, offset short of +0.02, PSDS1 within
    ("contract", "bce_only", "tuned", "onset/typed/area"): (0.031, 0.012, 0.05),
    ("contract", "bce_only", "tuned", "offset/typed/area"): (0.019, 0.004, 0.03),
    ("contract", "bce_only", "tuned", "psds1"): (0.004, -0.008, 0.016)}
