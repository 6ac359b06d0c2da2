"""The rows of an audit that are no per-clip count, beside its source rows: the policy's
settings (role ``setting``, the text in ``value``) and the ranking metrics that are no sum of
counts (role ``ranking``: each PSDS scenario, mAUC and mpAUC, overall and per class, their
bootstrap draws over the clips and each class's PSD-ROC staircase), so ``report`` shows them
from the rows alone."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from sedcontract.guard.rows import (
    CORPUS,
    DRAWS,
    RANKING,
    SCHEMA_VERSION,
    SETTING,
    point_clip,
    ranking_row,
    resample_clip,
    setting_row,
)

__all__ = ["ranking_rows", "setting_rows"]


def _flat(section: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(dotted key, text)`` of every leaf: strings as they are, other values as JSON."""
    for key, value in section.items():
        if isinstance(value, Mapping):
            yield from _flat(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value if isinstance(value, str) else json.dumps(value)


def _row(system: str, policy: str, coordinate: str, role: str, value: str, clip: str = CORPUS,
         cls: str = "*") -> dict[str, Any]:
    return {"system": system, "policy": policy, "mode": "typed", "clip": clip, "class": cls,
            "coordinate": coordinate, "role": role, "sort": "corpus", "satisfied": "",
            "obligations": "", "value": value}


def _draws(psds: Mapping[str, Any] | None, auroc: Mapping[str, Any] | None
           ) -> tuple[int, int] | None:
    """The seed and number of resamples of the ranking metrics' draws (one for all of them:
    an audit draws them together), or None without draws."""
    for value in (psds or {}).values():
        if isinstance(value, Mapping) and "draws" in value:
            return int(value["interval"]["seed"]), int(value["interval"]["resamples"])
    if auroc is not None and "draws" in auroc:
        interval = auroc["intervals"]["mauc"]
        return int(interval["seed"]), int(interval["resamples"])
    return None


def setting_rows(policy: Mapping[str, Any], psds: Mapping[str, Any] | None,
                 auroc: Mapping[str, Any] | None, system: str, digest: str
                 ) -> list[dict[str, Any]]:
    """A row per setting: the rows' ``setting:schema_version``, the policy's (``setting:eps``,
    ``setting:scores.t_collar``, …),
    each PSDS scenario's (``setting:psds1.dtc``), the AUROC's (``setting:auroc.max_fpr``) and,
    with bootstrap draws, their ``setting:draws.seed`` and ``setting:draws.resamples``."""
    sections: dict[str, Any] = {"schema_version": SCHEMA_VERSION, **policy}
    for name, value in (psds or {}).items():
        if isinstance(value, Mapping) and "settings" in value:
            sections[name] = value["settings"]
    if auroc is not None:
        sections["auroc"] = auroc["settings"]
    drawn = _draws(psds, auroc)
    if drawn is not None:
        sections[DRAWS] = {"seed": drawn[0], "resamples": drawn[1]}
    return [_row(system, digest, setting_row(key), SETTING, text)
            for key, text in _flat(sections)]


def _number(value: Any) -> str | None:
    """A finite value as the shortest text that reads back to it; None when undefined."""
    number = float(value)
    return repr(number) if math.isfinite(number) else None


def ranking_rows(psds: Mapping[str, Any] | None, auroc: Mapping[str, Any] | None,
                 system: str, digest: str) -> list[dict[str, Any]]:
    """Each ranking metric (a PSDS scenario, ``mauc``, ``mpauc``): its value (class ``*``),
    per class, the draws of a bootstrap over the clips (clip ``resample:<r>``; an undefined
    draw has no row; their seed and number are settings, :func:`setting_rows`), and for PSDS
    each class's PSD-ROC staircase up to ``max_efpr`` (clip ``point:<k>``, parts ``efpr`` and
    ``tpr``; class ``*``: the effective curve, eTPR). An undefined value has no row."""
    rows: list[dict[str, Any]] = []

    def add(metric: str, value: Any, clip: str = CORPUS, cls: str = "*", part: str = "") -> None:
        text = _number(value)
        if text is not None:
            rows.append(_row(system, digest, ranking_row(metric, part), RANKING, text, clip, cls))

    def draws(metric: str, values: Any) -> None:
        for r, value in enumerate(np.asarray(values, dtype=float)):
            add(metric, value, resample_clip(r))

    for name, value in (psds or {}).items():
        if not isinstance(value, Mapping) or "value" not in value:
            continue  # a note: PSDS was not computed
        add(name, value["value"])
        for cls, per in (value.get("per_class") or {}).items():
            add(name, per, cls=cls)
        if "draws" in value:
            draws(name, value["draws"])
        roc, top = value.get("roc") or {}, value["settings"]["max_efpr"]
        curves = {"*": (roc.get("efpr", ()), roc.get("etpr", ())),
                  **{c: (v["efpr"], v["tpr"]) for c, v in (roc.get("classes") or {}).items()}}
        for cls, (efpr, tpr) in curves.items():
            for k, (x, y) in enumerate((x, y) for x, y in zip(efpr, tpr, strict=True)
                                       if x <= top):
                add(name, x, point_clip(k), cls, "efpr")
                add(name, y, point_clip(k), cls, "tpr")
    if auroc is not None:
        for metric, part in (("mauc", "auc"), ("mpauc", "pauc")):
            add(metric, auroc[metric])
            for cls, per in auroc["per_class"].items():
                add(metric, per[part], cls=cls)
            if "draws" in auroc:
                draws(metric, auroc["draws"][metric])
    return rows
