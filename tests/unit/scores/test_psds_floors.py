"""Score floors (PSDS from score tables): what lies below a class's floor is left out, and every
value, per-class value and curve stays the same, bit for bit; a floor one false positive too
high would change them (a hand case); floors step aside where a run could be relevant
without overlapping any reference event."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from sedcontract.scores.psds.floors import false_needed
from sedcontract.scores.psds.of_scores import ClipTruth, ScoredCorpus
from sedcontract.scores.psds.request import psds
from sedcontract.scores.psds.score_counts import block_counts
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings
from sedcontract.traces import EventList
from sedcontract.traces.given import score_source
from sedcontract.traces.score_files import ScoreTable
from tests.helpers.score_tables import assert_sed_scores_eval_psds, corpus

SETTINGS = {
    **PRESETS,
    "cross": PsdsSettings(dtc=0.3, gtc=0.4, cttc=0.2, alpha_ct=1.0, alpha_st=0.5,
                          max_efpr=400.0),
    "loose": PsdsSettings(dtc=0.0, gtc=0.2, cttc=0.1, alpha_ct=0.0, alpha_st=2.0,
                          max_efpr=50.0),
}


def dense(seed: int, clips: int = 40, n_classes: int = 5, levels: int | None = None):
    """:func:`corpus` with a low floor of noise on every frame of every class, as a sigmoid
    output scores them (most columns hold no reference event of their class)."""
    ref, tables, durations, classes = corpus(seed, clips=clips, n_classes=n_classes,
                                             levels=levels)
    rng = np.random.default_rng(seed + 100)
    for clip, t in tables.items():
        noise = rng.uniform(0, 0.05, t.scores.shape)
        quiet = rng.random(t.scores.shape[1]) < 0.7  # most columns: noise only
        scores = np.where(quiet, noise, np.maximum(t.scores, noise))
        tables[clip] = ScoreTable(t.onset, t.offset, t.classes, scores, t.lines)
    return ref, tables, durations, classes


def as_json(result) -> str:
    return json.dumps(result, sort_keys=True)


@pytest.mark.parametrize("seed", range(6))
def test_floors_leave_every_value_and_curve_as_they_were(seed):
    """With and without floors, in one process, with the tables cut at the durations, and
    on blocks of an executor: the same values, per-class values and curves, bit for bit;
    and the floors do leave counts out."""
    ref, tables, durations, classes = dense(seed, levels=(None, 9)[seed % 2])
    if seed % 3 == 2:  # clips shorter than their tables: cut both
        durations = {c: d - 0.3 for c, d in durations.items()}
    cut = seed % 3 == 2
    every = psds(tables, ref, durations, SETTINGS, cut=cut, floors=False)
    floored = psds(tables, ref, durations, SETTINGS, cut=cut)  # in memory: floors by default
    assert as_json(floored) == as_json(every)
    with ThreadPoolExecutor(2) as pool:
        spread = psds(tables, ref, durations, SETTINGS, cut=cut, executor=pool, blocks=3)
    assert as_json(spread) == as_json(every)

    source = score_source(tables, ref.clips)
    scored = ScoredCorpus.of(source, ref, durations, classes, cut)
    floor = scored.floors(source, list(SETTINGS.values()))
    assert floor is not None and np.isfinite(floor).sum() >= len(classes) - 1
    if not cut:
        truth = ClipTruth.of(ref, list(tables), classes)
        rows = [sum(p.rows for p in block_counts(source.stream(truth.clips), truth, classes,
                                                 list(SETTINGS.values()), floor=f)[0])
                for f in (None, floor)]
        assert rows[1] < rows[0] / 2


@pytest.mark.parametrize("seed", range(3))
def test_psds_with_floors_equals_sed_scores_eval_on_dense_scores(seed):
    ref, tables, durations, _ = dense(seed, clips=12)
    assert_sed_scores_eval_psds(ref, tables, durations)


def test_the_floor_keeps_a_point_that_sits_at_the_last_false_positive_allowed():
    """One hour of audio, max_efpr 2.5 per hour: 2 false positives stay within it, 3 do not.
    Columns without events top at 0.9, 0.8 and 0.7; the event's column scores 0.75, where 2
    false positives are counted: the TPR rises to 1 at eFPR 2, so PSDS = 0.5 / 2.5. A floor
    at the second-highest top (one false positive too few) would leave that out."""
    frames = np.arange(9)
    onset, offset = frames * 100.0, (frames + 1) * 100.0
    tables = {}
    for clip, top in (("a", 0.75), ("b", 0.9), ("c", 0.8), ("d", 0.7)):
        s = np.zeros((9, 1))
        s[0, 0] = top
        tables[clip] = ScoreTable(onset, offset, ("c0",), s, frames + 2)
    ref = EventList.from_rows([("a", 0.0, 100.0, "c0")], clips=tuple(tables))
    durations = dict.fromkeys(tables, 900.0)
    chosen = {"s": PsdsSettings(dtc=0.5, gtc=0.5, alpha_st=1.0, max_efpr=2.5)}
    assert false_needed(3600.0, list(chosen.values())) == 3
    result = psds(tables, ref, durations, chosen)
    assert result["s"]["value"] == pytest.approx(0.2, abs=1e-15)
    assert as_json(result) == as_json(psds(tables, ref, durations, chosen, floors=False))
    source = score_source(tables, ref.clips)
    scored = ScoredCorpus.of(source, ref, durations, ("c0",))
    assert scored.floors(source, list(chosen.values())).tolist() == [0.7]


@pytest.mark.parametrize(("total", "max_efpr", "need"), [
    (3600.0, 100.0, 101),   # exactly 100 per hour is still within
    (1800.0, 100.0, 51),
    (9.6, 100.0, 1),        # one false positive already passes
    (3600.0, 0.5, 1),
    (7200.0, 2.5, 6),
])
def test_the_false_positives_needed_to_pass_max_efpr(total, max_efpr, need):
    chosen = PsdsSettings(max_efpr=max_efpr)
    assert false_needed(total, [chosen]) == need
    assert need / total * 3600 > max_efpr and (need - 1) / total * 3600 <= max_efpr


def test_floors_step_aside_where_a_run_needs_no_overlap_to_be_relevant():
    """A scenario counting cross-triggers with a detection criterion of 0 finds every run
    relevant, even one without reference events: no floor holds then (and the values are
    sed_scores_eval's as ever)."""
    ref, tables, durations, classes = dense(1, clips=12)
    zero = {"zero": PsdsSettings(dtc=0.0, gtc=0.0, cttc=0.0, alpha_ct=0.5, alpha_st=0.5)}
    source = score_source(tables, ref.clips)
    scored = ScoredCorpus.of(source, ref, durations, classes)
    assert scored.floors(source, list(zero.values())) is None
    assert scored.floors(source, [PRESETS["psds2"]]) is not None
    assert as_json(psds(tables, ref, durations, zero)) == \
        as_json(psds(tables, ref, durations, zero, floors=False))
