"""Random score tables and reference events, written as score files and checked against
sed_scores_eval's PSDS (the oracle of the PSDS tests)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from sedcontract.scores.psds.request import psds
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings
from sedcontract.traces import EventList
from sedcontract.traces.score_files import ScoreTable

SETTINGS = {
    **PRESETS,
    "custom": PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=1.0, alpha_st=0.0,
                           max_efpr=1000.0),
    # criteria that round to 0: every detection relevant, every event found at once, every
    # detection a cross-trigger of each class its clip's reference names
    "zero": PsdsSettings(dtc=0.0, gtc=0.0, cttc=0.0, alpha_ct=0.5, alpha_st=0.5),
    "loose": PsdsSettings(dtc=0.0, gtc=0.2, cttc=0.1, alpha_ct=0.0, alpha_st=2.0,
                          max_efpr=50.0),
}


def corpus(seed: int, clips: int = 6, n_classes: int = 4, frames: int = 40, hop: float = 0.04,
           levels: int | None = None):
    """Random reference events (3 decimals) and score tables (``levels``: scores rounded to
    that many steps, so ties and flat stretches occur), one column of zeros a clip; every
    class has reference events."""
    rng = np.random.default_rng(seed)
    classes = tuple(f"c{k}" for k in range(n_classes))
    span = frames * hop
    rows = [(f"clip{k % clips}", 0.1, 0.5, classes[k]) for k in range(n_classes)]
    tables = {}
    for i in range(clips):
        clip = f"clip{i}"
        for _ in range(int(rng.integers(0, 6))):
            on = round(float(rng.uniform(0, span - 0.1)), 3)
            off = round(min(span, on + float(rng.uniform(0.03, 1.0))), 3)
            rows.append((clip, on, off, classes[int(rng.integers(n_classes))]))
        s = rng.uniform(0, 1, (frames, n_classes))
        if levels:
            s = np.round(s * levels) / levels
        s[:, int(rng.integers(n_classes))] = 0.0
        k = np.arange(frames)
        tables[clip] = ScoreTable(np.round(k * hop, 6), np.round((k + 1) * hop, 6), classes, s,
                                  k + 2)
    ref = EventList.from_rows(rows, clips=tuple(tables))
    return ref, tables, dict.fromkeys(tables, span), classes


def sse_psds(ref, tables, durations, settings):
    """sed_scores_eval's PSDS of the tables: value, per-class values and (etpr, efpr)."""
    intersection_based = pytest.importorskip("sed_scores_eval.intersection_based")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sed_scores_eval.base_modules.scores import create_score_dataframe

        from sedcontract.scores.psds.settings import ground_truth

        frames = {clip: create_score_dataframe(
            t.scores, np.concatenate([t.onset, t.offset[-1:]]), list(t.classes))
            for clip, t in tables.items()}
        value, per_class, roc, _ = intersection_based.psds(frames, ground_truth(ref),
                                                           durations,
                                                           **settings.sed_scores_eval())
    return value, per_class, roc


def assert_sed_scores_eval_psds(ref, tables, durations):
    """Every scenario of ``SETTINGS``, overall and per class, equal to sed_scores_eval's to
    1e-9."""
    ours = psds(tables, ref, durations, SETTINGS)
    for name, chosen in SETTINGS.items():
        value, per_class, _ = sse_psds(ref, tables, durations, chosen)
        assert ours[name]["value"] == pytest.approx(value, abs=1e-9), name
        for c, v in per_class.items():
            assert ours[name]["per_class"][c] == pytest.approx(v, abs=1e-9), (name, c)
        assert ours[name]["rule"] == "sed_scores_eval"


def write_tables(folder: Path, tables) -> Path:
    """Score tables as sed_scores_eval score files, one per clip."""
    folder.mkdir()
    for clip, t in tables.items():
        lines = ["\t".join(("onset", "offset", *t.classes))] + [
            "\t".join([repr(float(a)), repr(float(b)), *(repr(float(v)) for v in row)])
            for a, b, row in zip(t.onset, t.offset, t.scores, strict=True)]
        (folder / f"{clip}.tsv").write_text("\n".join(lines) + "\n")
    return folder
