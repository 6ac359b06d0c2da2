"""Audio files read with their costs bounded before any sample is: only regular files (a pipe
named ``*.wav`` would block the reader forever), a header whose sample rate is one audio uses
and whose length is within the run's limit, resampling only where its kernel is small; mono
(channels averaged) at the run's rate."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sedcontract.errors import SedContractError
from sedcontract.requires import AUDIO, need
from sedcontract.traces.tsv import regular_file

if TYPE_CHECKING:  # torch is imported where samples are read
    import torch

MAX_SAMPLE_RATE = 768_000  # the highest rate audio files use (DXD); a larger header is broken
# seconds of audio one clip may hold when it is read whole (training and evaluation items):
# 600 s at 16 kHz is 38 MB of float32 samples, a batch of 16 such clips 614 MB
MAX_AUDIO_SECONDS = 600.0
# cells of the resampling kernel (float32): torchaudio's sinc kernel has (new / g) rows of about
# (old / g) taps, g = gcd(old, new); 44.1 → 16 kHz needs 76,000, a rate prime to 16 kHz billions
MAX_KERNEL_CELLS = 1 << 22


@dataclass(frozen=True)
class AudioInfo:
    """What an audio file's header says."""

    path: Path
    rate: int
    frames: int
    channels: int

    @property
    def seconds(self) -> float:
        return self.frames / self.rate


def audio_info(path: str | Path) -> AudioInfo:
    """The header of ``path``, a regular audio file with a sample rate in (0,
    :data:`MAX_SAMPLE_RATE`] Hz; anything else is an error naming the file."""
    soundfile = need("soundfile", "reading audio", AUDIO)
    path = regular_file(Path(path))
    try:
        info = soundfile.info(str(path))
    except RuntimeError as exc:  # soundfile's LibsndfileError: not audio, or broken
        raise SedContractError(f"{path}: cannot read audio ({_reason(exc)})") from None
    if not 0 < info.samplerate <= MAX_SAMPLE_RATE:
        raise SedContractError(f"{path}: the header declares a sample rate of "
                               f"{info.samplerate} Hz, outside (0, {MAX_SAMPLE_RATE}] Hz: the "
                               "file is broken or not audio")
    return AudioInfo(path, int(info.samplerate), int(info.frames), int(info.channels))


def _reason(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def check_length(seconds: float, limit: float, where: str, option: str | None) -> None:
    """Refuse audio longer than ``limit`` seconds before its samples are allocated
    (``option`` raises the limit, where one does)."""
    if not math.isfinite(seconds) or seconds > limit:
        raise SedContractError(f"{where}: {seconds:g} s of audio is more than the limit of "
                               f"{limit:g} s per clip" + (f" ({option}); raise it if the clips "
                                                         "are meant to be that long"
                                                         if option else ""))


def check_resample(path: str | Path, rate: int, target: int) -> None:
    """Refuse resampling ``rate`` → ``target`` Hz whose kernel would exceed
    :data:`MAX_KERNEL_CELLS` (a rate prime to the target makes it rows × taps of the full
    rates)."""
    if rate == target:
        return
    g = math.gcd(rate, target)
    old, new = rate // g, target // g  # torchaudio's sinc kernel: width 6, rolloff 0.99
    cells = new * (old + 2 * math.ceil(6 * old / (min(old, new) * 0.99)))
    if cells > MAX_KERNEL_CELLS:
        raise SedContractError(f"{path}: resampling {rate} Hz to {target} Hz needs a kernel of "
                               f"{cells:,} cells (more than {MAX_KERNEL_CELLS:,}): convert the "
                               f"file to a common rate first (e.g. {target} Hz)")


def read_audio(path: str | Path, sample_rate: int, *, start: float = 0.0,
               stop: float | None = None, limit: float = MAX_AUDIO_SECONDS,
               option: str | None = "data.max_seconds") -> torch.Tensor:
    """Samples ``[start, stop)`` seconds (default: all) of ``path``, mono, at ``sample_rate``;
    at most ``limit`` seconds (``option`` raises it), checked from the header first."""
    import torch
    import torchaudio

    soundfile = need("soundfile", "reading audio", AUDIO)
    info = audio_info(path)
    first = round(start * info.rate)
    last = info.frames if stop is None else round(stop * info.rate)
    check_length((last - first) / info.rate, limit, str(info.path), option)
    check_resample(info.path, info.rate, sample_rate)
    try:  # one open: only the samples asked for
        with soundfile.SoundFile(str(info.path)) as f:
            f.seek(first)
            data = f.read(max(last - first, 0), dtype="float32", always_2d=True)
    except RuntimeError as exc:
        raise SedContractError(f"{info.path}: cannot read audio ({_reason(exc)})") from None
    wave = torch.from_numpy(data.mean(axis=1))
    if info.rate != sample_rate:
        wave = torchaudio.functional.resample(wave, info.rate, sample_rate)
    return wave

