"""Controlled perturbations of test scenes, one family each at graded severity, every parameter
recorded. How each keeps the reference true:

- ``noise``: white noise at a signal-to-noise ratio over the whole clip; labels unchanged.
- ``reverb``: a synthetic exponentially decaying impulse response with the given RT60; the
  reverberant tail is *not* labelled (labels stay those of the dry sources).
- ``clipping``: hard clipping at a fraction of the peak; labels unchanged.
- ``gain_drift``: a slow sinusoidal gain of ± the given dB; labels unchanged.
- ``jitter``: a smooth monotonic time warp; the audio is resampled through it and every label
  time is mapped by the same warp, so labels follow the audio.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.signal import fftconvolve

from sedcontract.data.synth import SAMPLE_RATE

# family → severities, mildest first
SEVERITIES: dict[str, tuple[float, ...]] = {
    "noise": (20.0, 10.0, 0.0),          # SNR in dB
    "reverb": (0.3, 0.6, 1.0),           # RT60 in seconds
    "clipping": (0.5, 0.25, 0.1),        # clip level as a fraction of the peak
    "gain_drift": (3.0, 6.0, 12.0),      # ± dB
    "jitter": (0.01, 0.03, 0.06),        # largest time displacement in seconds
}

Warp = Callable[[np.ndarray], np.ndarray]


def noise(x: np.ndarray, rng: np.random.Generator, snr_db: float,
          sr: int = SAMPLE_RATE) -> tuple[np.ndarray, dict]:
    power = float(np.mean(x**2))
    n = rng.standard_normal(len(x))
    n *= np.sqrt(power / (10 ** (snr_db / 10)) / max(float(np.mean(n**2)), 1e-30))
    return x + n, {"snr_db": snr_db}


def reverb(x: np.ndarray, rng: np.random.Generator, rt60: float,
           sr: int = SAMPLE_RATE) -> tuple[np.ndarray, dict]:
    length = int(rt60 * sr)
    t = np.arange(length) / sr
    ir = rng.standard_normal(length) * 10 ** (-3 * t / rt60)  # −60 dB at rt60
    ir[0] = 1.0  # direct path
    wet = fftconvolve(x, ir)[: len(x)]
    return wet * (np.abs(x).max() / max(np.abs(wet).max(), 1e-12)), {"rt60": rt60}


def clipping(x: np.ndarray, rng: np.random.Generator, level: float,
             sr: int = SAMPLE_RATE) -> tuple[np.ndarray, dict]:
    limit = level * float(np.abs(x).max())
    return np.clip(x, -limit, limit), {"level": level}


def gain_drift(x: np.ndarray, rng: np.random.Generator, depth_db: float,
               sr: int = SAMPLE_RATE) -> tuple[np.ndarray, dict]:
    period = float(rng.uniform(3.0, 8.0))
    phase = float(rng.uniform(0, 2 * np.pi))
    t = np.arange(len(x)) / sr
    gain_db = depth_db * np.sin(2 * np.pi * t / period + phase)
    return x * 10 ** (gain_db / 20), {"depth_db": depth_db, "period": round(period, 4),
                                      "phase": round(phase, 4)}


def jitter_warp(rng: np.random.Generator, duration: float, max_shift: float) -> tuple[Warp, dict]:
    """A smooth monotonic warp ``t → t + δ(t)`` with ``|δ| <= max_shift``, ``δ(0) = 0`` and
    slope kept above 0.5 (knots every second, linear between them)."""
    knots = np.arange(0.0, duration + 1.0, 1.0)
    shifts = rng.uniform(-max_shift, max_shift, size=len(knots))
    shifts[0] = 0.0
    shifts = np.clip(shifts, -knots, None)  # never before time 0

    def warp(times: np.ndarray) -> np.ndarray:
        return np.asarray(times, dtype=float) + np.interp(times, knots, shifts)

    return warp, {"max_shift": max_shift, "knot_shifts": [round(float(s), 6) for s in shifts]}


def jitter(x: np.ndarray, rng: np.random.Generator, max_shift: float,
           sr: int = SAMPLE_RATE) -> tuple[np.ndarray, dict, Warp]:
    """Audio resampled through the warp: the sound at time t moves to ``warp(t)``."""
    duration = len(x) / sr
    warp, params = jitter_warp(rng, duration, max_shift)
    source_times = np.arange(len(x)) / sr
    target = warp(source_times)
    out_times = np.arange(len(x)) / sr
    y = np.interp(out_times, target, x, left=0.0, right=0.0)  # inverse map by interpolation
    return y, params, warp


FAMILIES = ("noise", "reverb", "clipping", "gain_drift", "jitter")
