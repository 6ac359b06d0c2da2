"""Train-time augmentation of a batch of waveforms with their frame activity (numpy, on the
CPU before the batch moves to its device): another clip's background mixed in, one of the
benchmark's own perturbation families at a random severity (so training sees what the test
split has), a random gain, and a time shift with the labels shifted. Labels follow the audio:
the shift moves both by whole frames, the jitter warp maps every frame centre back through
the warp (exact to the frame, as for the test split's events)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sedcontract.data import perturb as families_
from sedcontract.errors import SedContractError


@dataclass(frozen=True)
class Augmentation:
    """What is applied to each training clip, and how strongly."""

    perturb: float = 0.5                 # probability of one perturbation family per clip
    families: tuple[str, ...] = families_.FAMILIES
    gain_db: float = 6.0                 # uniform gain in ± dB
    shift: float = 1.0                   # largest time shift, seconds
    background: float = 0.3              # probability of mixing another clip's background
    background_db: tuple[float, float] = (-20.0, -6.0)  # its level relative to the clip

    def __post_init__(self) -> None:
        unknown = sorted(set(self.families) - set(families_.FAMILIES))
        if unknown:
            raise SedContractError(f"unknown perturbation famil(ies) {unknown}; the families "
                                   f"are {', '.join(families_.FAMILIES)}")
        for name in ("perturb", "background"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise SedContractError(f"augment.waveform.{name} is a probability in [0, 1], "
                                       f"got {value!r}")
        if self.gain_db < 0 or self.shift < 0:
            raise SedContractError("augment.waveform.gain_db and augment.waveform.shift must be "
                                   ">= 0")

    def __call__(self, waveform: np.ndarray, activity: np.ndarray, samples: np.ndarray,
                 frames: np.ndarray, *, hop: float, sample_rate: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Augmented copies of ``waveform [batch, samples]`` and Boolean ``activity
        [batch, classes, frames]``; each clip keeps its own length."""
        waveform, activity = waveform.astype(np.float64), activity.astype(bool)
        out_w, out_a = waveform.copy(), activity.copy()
        hop_samples = round(hop * sample_rate)
        for i in range(len(waveform)):
            n, t = int(samples[i]), int(frames[i])
            x, a = out_w[i, :n], out_a[i, :, :t]
            if len(waveform) > 1 and rng.random() < self.background:
                j = int(rng.choice([k for k in range(len(waveform)) if k != i]))
                x = x + self._background(waveform[j], activity[j], int(samples[j]), n, x,
                                         hop_samples, rng)
            if self.families and rng.random() < self.perturb:
                x, a = self._perturb(x, a, hop, sample_rate, rng)
            if self.gain_db:
                x = x * 10 ** (rng.uniform(-self.gain_db, self.gain_db) / 20)
            limit = int(self.shift / hop)
            if limit:
                x, a = _shift(x, a, int(rng.integers(-limit, limit + 1)), hop_samples)
            out_w[i, :n], out_a[i, :, :t] = x, a
        return out_w.astype(np.float32), out_a

    def _background(self, other: np.ndarray, other_activity: np.ndarray, other_samples: int,
                    n: int, x: np.ndarray, hop_samples: int,
                    rng: np.random.Generator) -> np.ndarray:
        """The other clip where none of its classes is active, at a random level below ``x``."""
        quiet = ~other_activity.any(axis=0)
        mask = np.repeat(quiet, hop_samples)[:other_samples]
        bg = np.zeros(n)
        m = min(n, len(mask))
        bg[:m] = other[:m] * mask[:m]
        power_x, power_bg = float(np.mean(x**2)), float(np.mean(bg**2))
        if power_bg <= 0 or power_x <= 0:
            return np.zeros(n)
        level = rng.uniform(*self.background_db)
        return bg * np.sqrt(power_x / power_bg * 10 ** (level / 10))

    def _perturb(self, x: np.ndarray, a: np.ndarray, hop: float, sample_rate: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        family = self.families[int(rng.integers(len(self.families)))]
        severities = families_.SEVERITIES[family]
        severity = rng.uniform(min(severities), max(severities))
        if family != "jitter":
            return getattr(families_, family)(x, rng, severity, sample_rate)[0], a
        y, _, warp = families_.jitter(x, rng, severity, sample_rate)
        return y, warp_frames(a, warp, hop)


def warp_frames(activity: np.ndarray, warp, hop: float) -> np.ndarray:
    """Frame activity after the audio moved through ``warp`` (time → new time): frame ``k`` is
    active iff the source time of its centre, ``warp⁻¹((k + ½)·hop)``, was active."""
    t = activity.shape[-1]
    grid = np.arange(t + 1) * hop
    centres = (np.arange(t) + 0.5) * hop
    source = np.interp(centres, warp(grid), grid)
    index = np.floor(source / hop).astype(np.int64)
    inside = (index >= 0) & (index < t)
    out = np.zeros_like(activity)
    out[:, inside] = activity[:, index[inside]]
    return out


def _shift(x: np.ndarray, a: np.ndarray, k: int, hop_samples: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """Audio and labels moved by ``k`` frames (later if positive), silence filling in."""
    y, b = np.zeros_like(x), np.zeros_like(a)
    if k == 0:
        return x, a
    if abs(k) >= a.shape[-1]:
        return y, b
    s = k * hop_samples  # |s| < len(x): a clip has at least as many samples as frames·hop
    if k > 0:
        y[s:], b[:, k:] = x[:-s], a[:, :-k]
    else:
        y[:s], b[:, :k] = x[-s:], a[:, -k:]
    return y, b
