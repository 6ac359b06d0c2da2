"""The protocol's intervals as source rows: per contrast and mode, the two-stage (training
seed, clip) paired bootstrap on each benchmark and the stratified one pooled over them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sedcontract.experiments.contract_losses import MODES
from sedcontract.guard import GuardReport, hierarchical_bootstrap, stratified_bootstrap
from sedcontract.resampling import Interval


def interval_fields(iv: Interval) -> dict[str, Any]:
    """An interval's columns in a source row (6 decimals)."""
    return {"point": f"{iv.point:.6f}", "lo": f"{iv.lo:.6f}", "hi": f"{iv.hi:.6f}",
            "level": iv.level, "defined": iv.defined, "resamples": iv.resamples}


def interval_rows(reports: Mapping[tuple, Sequence[GuardReport]], data_seeds: Sequence[int],
                  contrasts: Iterable[tuple[str, str, str, str]], resamples: int,
                  level: float = 0.95) -> list[dict[str, Any]]:
    """Per contrast and mode, the two-stage (seed, clip) interval on each benchmark (the k-th
    drawn from seed k) and the stratified one pooled over them with the same draws."""
    out = []
    for system, post, control, control_post in contrasts:
        pairs = [(reports[(d, system, post)], reports[(d, control, control_post)])
                 for d in data_seeds]
        for mode in MODES:
            found = {str(d): hierarchical_bootstrap(a, b, mode=mode, resamples=resamples,
                                                    seed=k, level=level)
                     for k, (d, (a, b)) in enumerate(zip(data_seeds, pairs, strict=True))}
            if len(pairs) > 1:
                found["pooled"] = stratified_bootstrap(pairs, mode=mode, resamples=resamples,
                                                       seed=0, level=level)
            for where, intervals in found.items():
                for coordinate, iv in intervals.items():
                    out.append({"benchmark": where, "system": system, "post": post,
                                "control": control, "control_post": control_post,
                                "mode": mode, "coordinate": coordinate, **interval_fields(iv)})
    return out
