"""Log-mel front end whose frames are the contract grid: output frame ``k`` is centred at
``(k + ½)·hop`` seconds, i.e. on frame ``k = [k·hop, (k+1)·hop)`` of the monitor, and a clip of
``S`` samples gives ``S // hop_samples`` frames."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
import torchaudio
from torch import nn


class LogMel(nn.Module):
    """``[batch, samples]`` waveform → ``[batch, n_mels, frames]`` log-mel energies."""

    def __init__(self, sample_rate: int = 16_000, hop: float = 0.02, n_fft: int = 1024,
                 window: float = 0.04, n_mels: int = 64) -> None:
        super().__init__()
        self.hop, self.hop_samples = hop, round(hop * sample_rate)
        if abs(self.hop_samples - hop * sample_rate) > 1e-6 or self.hop_samples <= 0:
            raise ValueError(f"hop {hop} s is not a whole number of samples at {sample_rate} Hz")
        win = round(window * sample_rate)
        if win > n_fft:
            raise ValueError(f"window of {win} samples is longer than n_fft {n_fft}")
        # pad so that the first window is centred on the middle of frame 0
        self.left = n_fft // 2 - self.hop_samples // 2
        self.n_fft = n_fft
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=sample_rate, n_fft=n_fft, win_length=win, hop_length=self.hop_samples,
            n_mels=n_mels, center=False, power=2.0)

    @property
    def dim(self) -> int:
        """Feature bins per frame."""
        return self.mel.n_mels

    def frames(self, samples: int) -> int:
        return samples // self.hop_samples

    def batch_features(self, batch: Mapping[str, Any]) -> torch.Tensor:
        """The features of a batch (its waveforms)."""
        return self(batch["waveform"])

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        frames = self.frames(waveform.shape[-1])
        needed = (frames - 1) * self.hop_samples + self.n_fft
        right = max(needed - self.left - waveform.shape[-1], 0)
        padded = F.pad(waveform, (self.left, right))
        return torch.log(self.mel(padded)[..., :frames] + 1e-6)
