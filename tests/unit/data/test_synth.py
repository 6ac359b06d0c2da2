"""Synthetic sources: deterministic, labelled truthfully (energy inside labels, silence
outside), and the declared speech energy rule behaves as stated on hand-made signals."""

from __future__ import annotations

import numpy as np
import pytest

from sedcontract.data.synth import SAMPLE_RATE, SpeechLabelRule, burst, label_speech, speech, tone

SR = SAMPLE_RATE


def test_sources_are_deterministic_from_the_seed():
    for make in (speech, tone, burst):
        a, pa = make(np.random.default_rng(11), 1.0)
        b, pb = make(np.random.default_rng(11), 1.0)
        c, _ = make(np.random.default_rng(12), 1.0)
        assert np.array_equal(a, b) and pa == pb
        assert not np.array_equal(a, c)


@pytest.mark.parametrize(("make", "kind"), [(tone, "pure"), (tone, "harmonic"), (tone, "am"),
                                            (burst, "band"), (burst, "impulsive")])
def test_events_by_construction_fill_their_label(make, kind):
    x, params = make(np.random.default_rng(3), 0.5, kind=kind)
    assert params["kind"] == kind
    # an impulsive burst ends with its last click's decay; the others fill their length
    assert len(x) <= 0.5 * SR if kind == "impulsive" else len(x) == 0.5 * SR
    assert np.isclose(np.abs(x).max(), 1.0)
    assert abs(x[0]) < 1e-3 and abs(x[-1]) < 0.05  # ramps (or a click's decay) at the ends
    quarters = np.array_split(x**2, 4)
    if kind != "impulsive":  # sustained sources carry energy throughout
        assert min(q.mean() for q in quarters) > 1e-3


@pytest.mark.parametrize("seed", range(5))
def test_speech_labels_hold_the_energy(seed):
    x, params = speech(np.random.default_rng(seed), 6.0)
    assert params["syllables"] > 5
    labels = label_speech(x)
    assert labels
    inside = np.zeros(len(x), dtype=bool)
    for on, off in labels:
        inside[int(on * SR):int(off * SR)] = True
    assert (x[inside] ** 2).sum() / (x**2).sum() > 0.999
    outside = x[~inside]
    if outside.size:
        ratio = (outside**2).mean() / (x[inside] ** 2).mean()
        assert 10 * np.log10(ratio + 1e-30) < -40


def test_energy_rule_bridges_short_gaps_and_drops_short_events():
    rng = np.random.default_rng(0)
    x = np.zeros(3 * SR)

    def put(on: float, off: float) -> None:
        start, stop = round(on * SR), round(off * SR)
        x[start:stop] = rng.standard_normal(stop - start)

    put(0.2, 0.6)
    put(0.7, 1.0)     # 0.1 s gap < min_gap 0.15: bridged
    put(1.5, 1.55)    # 0.05 s alone < min_duration 0.1: dropped
    put(2.0, 2.5)     # 0.5 s gap: a separate event
    labels = label_speech(x, rule=SpeechLabelRule())
    assert labels == [(0.2, 1.0), (2.0, 2.5)]
    strict = label_speech(x, rule=SpeechLabelRule(min_gap=0.05, min_duration=0.01))
    assert strict == [(0.2, 0.6), (0.7, 1.0), (1.5, 1.55), (2.0, 2.5)]
    assert label_speech(np.zeros(SR)) == []
