"""Synthetic sources of the controlled benchmark: tones, bursts and a speech-like signal,
each deterministic from a numpy Generator, each returned with the intervals it is active in.

Tones and bursts are labelled by construction (with 10 ms raised-cosine ramps inside the
label); speech is labelled by a declared energy rule on the clean source (``label_speech``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import butter, lfilter, sosfilt

SAMPLE_RATE = 16_000
RAMP = 0.010  # seconds of raised-cosine fade at both ends of tones and bursts


def _ramp(n: int, sr: int) -> np.ndarray:
    """Raised-cosine fade-in/out envelope of length n."""
    k = min(int(RAMP * sr), n // 2)
    env = np.ones(n)
    if k:
        fade = 0.5 - 0.5 * np.cos(np.pi * np.arange(k) / k)
        env[:k], env[n - k:] = fade, fade[::-1]
    return env


def tone(rng: np.random.Generator, duration: float, sr: int = SAMPLE_RATE,
         kind: str | None = None) -> tuple[np.ndarray, dict]:
    """A pure, harmonic or amplitude-modulated tone of ``duration`` seconds, peak 1."""
    kind = kind or str(rng.choice(["pure", "harmonic", "am"]))
    n = round(duration * sr)
    t = np.arange(n) / sr
    if kind == "pure":
        f0 = float(rng.uniform(300, 3000))
        x = np.sin(2 * np.pi * f0 * t)
    elif kind == "harmonic":
        f0 = float(rng.uniform(150, 800))
        harmonics = int(rng.integers(3, 6))
        x = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, harmonics + 1))
    elif kind == "am":
        f0 = float(rng.uniform(400, 2500))
        rate = float(rng.uniform(4, 8))
        x = np.sin(2 * np.pi * f0 * t) * (1 - 0.5 * (1 + np.sin(2 * np.pi * rate * t)) / 2)
    else:
        raise ValueError(f"unknown tone kind {kind!r}")
    x = x * _ramp(n, sr)
    return x / max(np.abs(x).max(), 1e-12), {"kind": kind, "f0": round(f0, 3)}


def burst(rng: np.random.Generator, duration: float, sr: int = SAMPLE_RATE,
          kind: str | None = None) -> tuple[np.ndarray, dict]:
    """Band-limited noise of ``duration`` s, or an impulsive cluster of decaying clicks within
    it (ending with the last click's decay, so possibly shorter), peak 1."""
    kind = kind or str(rng.choice(["band", "impulsive"]))
    n = round(duration * sr)
    if kind == "band":
        low = float(rng.uniform(200, 3000))
        high = min(low * float(rng.uniform(1.5, 3.0)), 0.45 * sr)
        sos = butter(4, [low, high], btype="bandpass", fs=sr, output="sos")
        x = sosfilt(sos, rng.standard_normal(n))
        params = {"kind": kind, "band": [round(low, 1), round(high, 1)]}
    elif kind == "impulsive":
        x = np.zeros(n)
        clicks = max(2, int(duration * rng.uniform(8, 20)))
        starts = np.sort(rng.integers(0, max(n - int(0.03 * sr), 1), size=clicks))
        starts[0] = 0  # the label starts with the first click
        last = 0
        for s in starts:
            length = int(rng.uniform(0.01, 0.03) * sr)
            seg = rng.standard_normal(length) * np.exp(-np.arange(length) / (0.004 * sr))
            x[s:s + length] += seg[: n - s]
            last = max(last, min(s + length, n))
        x = x[:last]  # the event ends with the last click's decay, not in silence
        n = last
        params = {"kind": kind, "clicks": clicks}
    else:
        raise ValueError(f"unknown burst kind {kind!r}")
    x = x * _ramp(n, sr)
    return x / max(np.abs(x).max(), 1e-12), params


def _resonator(freq: float, bandwidth: float, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """Two-pole resonator coefficients (unit gain at DC scaled away)."""
    r = np.exp(-np.pi * bandwidth / sr)
    theta = 2 * np.pi * freq / sr
    return np.array([1 - r]), np.array([1, -2 * r * np.cos(theta), r * r])


def speech(rng: np.random.Generator, duration: float,
           sr: int = SAMPLE_RATE) -> tuple[np.ndarray, dict]:
    """A speech-like signal: syllables (glottal pulse train with a drifting f0, or noise for
    unvoiced onsets) through three formant resonators, syllabic envelopes, word and phrase
    pauses. Returns the waveform (peak 1) and its parameters."""
    n = round(duration * sr)
    x = np.zeros(n)
    f0_base = float(rng.uniform(100, 220))
    t = float(rng.uniform(0.0, 0.2))
    syllables = 0
    while t < duration - 0.15:
        for _ in range(int(rng.integers(1, 4))):          # a word of 1-3 syllables
            length = float(rng.uniform(0.12, 0.32))
            start, stop = int(t * sr), min(int((t + length) * sr), n)
            if stop - start < int(0.05 * sr):
                break
            m = stop - start
            f0 = f0_base * (1 + 0.15 * np.sin(2 * np.pi * rng.uniform(1, 3) * np.arange(m) / sr))
            phase = np.cumsum(f0 / sr)
            pulses = (np.diff(np.floor(phase), prepend=0) > 0).astype(float)
            voiced = lfilter([1.0], [1, -0.95], pulses)      # glottal-like spectral tilt
            noise = rng.standard_normal(m) * 0.3
            unvoiced = int(rng.uniform(0.0, 0.3) * m)      # consonant-like noisy onset
            excitation = np.concatenate([noise[:unvoiced], voiced[unvoiced:]])
            y = np.zeros(m)
            for lo, hi, bw in ((300, 850, 90), (900, 2300, 110), (2300, 3200, 150)):
                b, a = _resonator(float(rng.uniform(lo, hi)), bw, sr)
                y += lfilter(b, a, excitation)
            envelope = np.sin(np.pi * np.arange(m) / m) ** 0.6
            x[start:stop] += y * envelope
            syllables += 1
            t += length + float(rng.uniform(0.0, 0.04))
        t += float(rng.uniform(0.05, 0.2) if rng.random() < 0.7 else rng.uniform(0.3, 0.8))
    peak = np.abs(x).max()
    return (x / peak if peak > 0 else x), {"f0": round(f0_base, 2), "syllables": syllables}


@dataclass(frozen=True)
class SpeechLabelRule:
    """Declared energy rule that labels speech on the clean source: frames of ``frame`` s whose
    RMS is within ``threshold_db`` of the loudest frame are active; gaps shorter than
    ``min_gap`` are bridged, then events shorter than ``min_duration`` dropped."""

    frame: float = 0.01
    threshold_db: float = -35.0
    min_gap: float = 0.15
    min_duration: float = 0.1


def label_speech(x: np.ndarray, sr: int = SAMPLE_RATE,
                 rule: SpeechLabelRule = SpeechLabelRule()) -> list[tuple[float, float]]:
    """``[(onset, offset), …]`` in seconds where the clean speech source is active."""
    hop = round(rule.frame * sr)
    frames = len(x) // hop
    if frames == 0:
        return []
    rms = np.sqrt(np.mean(x[: frames * hop].reshape(frames, hop) ** 2, axis=1))
    if rms.max() <= 0:
        return []
    active = 20 * np.log10(np.maximum(rms, 1e-12) / rms.max()) > rule.threshold_db
    edges = np.diff(np.concatenate([[0], active.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    intervals: list[list[float]] = []
    for s, e in zip(starts * rule.frame, ends * rule.frame, strict=True):
        if intervals and s - intervals[-1][1] < rule.min_gap:
            intervals[-1][1] = e
        else:
            intervals.append([s, e])
    return [(round(float(s), 6), round(float(e), 6)) for s, e in intervals
            if e - s >= rule.min_duration]
