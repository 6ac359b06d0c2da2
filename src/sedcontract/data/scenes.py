"""Scenes of the controlled benchmark: synthetic speech, tones and bursts placed on a 10 s,
16 kHz canvas with exact reference events, then (for test items) one perturbation.

Everything is a pure function of an integer seed; the returned record says how the scene was
made (sources with offsets and parameters, events, perturbation) so a manifest can hold it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sedcontract.data import perturb
from sedcontract.data.synth import SAMPLE_RATE, SpeechLabelRule, burst, label_speech, speech, tone

CLASSES = ("burst", "speech", "tone")


@dataclass(frozen=True)
class SceneConfig:
    """How scenes are drawn; part of the manifest (a change rebuilds the data)."""

    duration: float = 10.0
    sample_rate: int = SAMPLE_RATE
    margin: float = 0.1           # events never touch the clip edges
    same_class_gap: float = 0.3   # seconds between events of one class
    overlap_rate: float = 0.3     # chance an event may overlap other classes
    speech_segments: tuple[int, int] = (1, 3)
    speech_length: tuple[float, float] = (1.5, 4.0)
    tones: tuple[int, int] = (1, 4)
    tone_length: tuple[float, float] = (0.3, 1.5)
    bursts: tuple[int, int] = (1, 4)
    burst_length: tuple[float, float] = (0.1, 0.8)
    speech_rule: SpeechLabelRule = field(default_factory=SpeechLabelRule)


def _place(rng: np.random.Generator, length: float, busy: list[tuple[float, float, str]],
           label: str, config: SceneConfig) -> float | None:
    """A start time for an event of ``length`` s, or None when no room is found."""
    allow_overlap = rng.random() < config.overlap_rate
    low, high = config.margin, config.duration - config.margin - length
    for _ in range(100):
        start = float(rng.uniform(low, high)) if high > low else low
        end = start + length
        clash = False
        for b_on, b_off, b_label in busy:
            gap = config.same_class_gap if b_label == label else 0.0
            if b_label != label and allow_overlap:
                continue
            if start < b_off + gap and end > b_on - gap:
                clash = True
                break
        if not clash and end <= config.duration - config.margin:
            return start
    return None


SpeechSource = Callable[[np.random.Generator, float, int], tuple[np.ndarray, dict]]


def synthetic_speech(rng: np.random.Generator, length: float,
                     sr: int) -> tuple[np.ndarray, dict]:
    """The built-in speech-like source, marked as synthetic in the manifest."""
    x, params = speech(rng, length, sr)
    return x, {"source": "synthetic", **params}


def make_scene(seed: int, config: SceneConfig = SceneConfig(),
               perturbation: tuple[str, float] | None = None,
               speech_source: SpeechSource = synthetic_speech) -> tuple[np.ndarray, dict]:
    """Waveform (float32, peak ≤ 0.9) and its record: sources, events, perturbation."""
    rng = np.random.default_rng(seed)
    sr, n = config.sample_rate, round(config.duration * config.sample_rate)
    mix = np.zeros(n)
    busy: list[tuple[float, float, str]] = []
    sources, events = [], []
    plan = [("speech", config.speech_segments, config.speech_length),
            ("tone", config.tones, config.tone_length),
            ("burst", config.bursts, config.burst_length)]
    for label, (lo_count, hi_count), (lo_len, hi_len) in plan:
        for _ in range(int(rng.integers(lo_count, hi_count + 1))):
            length = float(rng.uniform(lo_len, hi_len))
            start = _place(rng, length, busy, label, config)
            if start is None:
                continue
            if label == "speech":
                x, params = speech_source(rng, length, sr)
                spans = [(start + a, start + b) for a, b in label_speech(x, sr,
                                                                         config.speech_rule)]
            else:
                x, params = (tone if label == "tone" else burst)(rng, length, sr)
                length = len(x) / sr  # an impulsive burst may end before its drawn length
                spans = [(start, start + length)]
            gain_db = float(rng.uniform(-6.0, 0.0))
            offset = round(start * sr)
            mix[offset:offset + len(x)] += x[: n - offset] * 10 ** (gain_db / 20)
            busy.append((start, start + length, label))
            sources.append({"class": label, "offset": round(start, 6),
                            "length": round(length, 6), "gain_db": round(gain_db, 3),
                            **params})
            events += [(round(a, 6), round(b, 6), label) for a, b in spans]
    record: dict = {"seed": seed, "sources": sources, "perturbation": None}
    if perturbation is not None:
        family, severity = perturbation
        if family == "jitter":
            mix, params, warp = perturb.jitter(mix, rng, severity, sr)
            events = [(round(float(warp(np.array([a]))[0]), 6),
                       round(float(warp(np.array([b]))[0]), 6), lab) for a, b, lab in events]
        else:
            mix, params = getattr(perturb, family)(mix, rng, severity, sr)
        record["perturbation"] = {"family": family, "severity": severity, **params}
    peak = float(np.abs(mix).max())
    if peak > 0:
        mix = mix * (0.9 / peak)
    record["events"] = sorted(events, key=lambda e: (e[0], e[2]))
    return mix.astype(np.float32), record
