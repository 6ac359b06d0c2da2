"""Perturbations: each changes the audio as declared, at the recorded parameters, and keeps
the reference true (labels unchanged, or mapped through the same warp for jitter)."""

from __future__ import annotations

import numpy as np
import pytest

from sedcontract.data import perturb
from sedcontract.data.synth import SAMPLE_RATE, tone

SR = SAMPLE_RATE


def scene() -> tuple[np.ndarray, tuple[float, float]]:
    x = np.zeros(4 * SR)
    y, _ = tone(np.random.default_rng(0), 1.0, kind="pure")
    x[SR:2 * SR] = y
    return x, (1.0, 2.0)


@pytest.mark.parametrize("snr", perturb.SEVERITIES["noise"])
def test_noise_reaches_the_declared_snr(snr):
    x, _ = scene()
    y, params = perturb.noise(x, np.random.default_rng(1), snr)
    measured = 10 * np.log10(np.mean(x**2) / np.mean((y - x) ** 2))
    assert abs(measured - snr) < 1e-6 and params == {"snr_db": snr}


def test_reverb_leaves_a_tail_after_the_label():
    x, (_, off) = scene()
    y, params = perturb.reverb(x, np.random.default_rng(2), 0.6)
    tail = y[int(off * SR):int((off + 0.1) * SR)]
    later = y[int((off + 1.0) * SR):int((off + 1.1) * SR)]
    assert np.mean(tail**2) > 1e-6  # the tail exists (and stays unlabelled)
    assert np.mean(later**2) < np.mean(tail**2) / 100  # and decays (−60 dB at 0.6 s)
    assert np.abs(y[: SR - 1]).max() < 1e-9  # nothing before the source starts
    assert params == {"rt60": 0.6}


@pytest.mark.parametrize("level", perturb.SEVERITIES["clipping"])
def test_clipping_caps_the_peak(level):
    x, _ = scene()
    y, _ = perturb.clipping(x, np.random.default_rng(0), level)
    assert np.isclose(np.abs(y).max(), level * np.abs(x).max())
    assert np.array_equal(y == 0, x == 0)


def test_gain_drift_stays_within_its_depth():
    x, _ = scene()
    y, params = perturb.gain_drift(x, np.random.default_rng(3), 6.0)
    nonzero = x != 0
    gain_db = 20 * np.log10(np.abs(y[nonzero] / x[nonzero]))
    assert gain_db.max() <= 6.0 + 1e-9 and gain_db.min() >= -6.0 - 1e-9
    assert gain_db.max() - gain_db.min() > 0.5 and 3.0 <= params["period"] <= 8.0


@pytest.mark.parametrize("shift", perturb.SEVERITIES["jitter"])
def test_jitter_moves_audio_and_labels_together(shift):
    x = np.zeros(6 * SR)
    clicks = np.array([0.5, 1.7, 2.9, 4.1, 5.3])
    x[(clicks * SR).astype(int)] = 1.0
    x = np.convolve(x, np.hanning(33), mode="same")  # smooth clicks resample cleanly
    y, params, warp = perturb.jitter(x, np.random.default_rng(4), shift)
    moved = warp(clicks)
    assert np.all(np.abs(moved - clicks) <= shift + 1e-12) and np.all(np.diff(moved) > 0)
    for t in moved:  # each click is found where the warped label says
        window = y[int((t - 0.01) * SR):int((t + 0.01) * SR)]
        assert window.max() > 0.9
    assert len(params["knot_shifts"]) >= 6


@pytest.mark.parametrize("seed", range(20))
def test_the_jitter_warp_keeps_time_zero_and_order(seed):
    warp, params = perturb.jitter_warp(np.random.default_rng(seed), 10.0, 0.06)
    times = np.linspace(0, 10, 1001)
    assert warp(np.array([0.0]))[0] == 0.0 and params["knot_shifts"][0] == 0.0
    assert np.all(np.diff(warp(times)) > 0) and np.all(warp(times) >= 0)
