"""DESED strong-labelled sets as a torch ``Dataset``: each clip's waveform (mono, at the run's
sample rate) cut or zero-padded to its length, with frame targets of its events on the
contract grid. No Lightning here."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import Dataset

from sedcontract.data.audio import MAX_AUDIO_SECONDS, check_length, check_resample, read_audio
from sedcontract.data.dataset import frame_targets
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList


class DesedClips(Dataset):
    """Clips ``lengths`` (id → seconds: 10 s for training, the listed duration for evaluation)
    of a DESED set, as items like the controlled benchmark's: ``id``, ``waveform``,
    ``sample_rate`` and the targets of ``reference``'s events."""

    def __init__(self, audio: Mapping[str, Path], reference: EventList,
                 lengths: Mapping[str, float], *, grid: float, classes: tuple[str, ...],
                 projection: str = "center", edges: str = "open",
                 sample_rate: int = 16_000, rates: Mapping[str, int] | None = None,
                 max_seconds: float = MAX_AUDIO_SECONDS) -> None:
        missing = [c for c in lengths if c not in audio]
        if missing:
            raise SedContractError(f"no audio file for DESED clip {missing[0]!r}")
        for clip, seconds in lengths.items():  # bounded before any sample is allocated
            check_length(seconds, max_seconds, f"DESED clip {clip!r}", "data.max_seconds")
        for clip, rate in (rates or {}).items():  # each rate the headers declared, once
            if clip in lengths:
                check_resample(audio[clip], rate, sample_rate)
        self.max_seconds = max_seconds
        self.ids = list(lengths)
        self.audio_of = {c: audio[c] for c in self.ids}
        self.lengths = {c: float(lengths[c]) for c in self.ids}
        self.grid, self.classes, self.projection, self.edges = grid, classes, projection, edges
        self.sample_rate = sample_rate
        self.rows_of: dict[str, list[tuple[str, float, float, str]]] = {c: [] for c in self.ids}
        for row in reference.to_rows():  # grouped once: an item never searches the list
            if row[0] in self.rows_of:
                self.rows_of[row[0]].append(row)

    def __len__(self) -> int:
        return len(self.ids)

    def audio(self, clip: str) -> torch.Tensor:
        """The clip's samples, mono, at the dataset's rate, cut or zero-padded to its length."""
        wave = read_audio(self.audio_of[clip], self.sample_rate, stop=self.lengths[clip],
                          limit=self.max_seconds)  # only the samples the clip's length needs
        n = round(self.lengths[clip] * self.sample_rate)
        if len(wave) >= n:
            return wave[:n].contiguous()
        return torch.cat([wave, wave.new_zeros(n - len(wave))])

    def __getitem__(self, index: int) -> dict[str, Any]:
        clip = self.ids[index]
        events = EventList.from_rows(self.rows_of[clip], clips=(clip,))
        return {"id": clip, "waveform": self.audio(clip), "sample_rate": self.sample_rate,
                **frame_targets(events, clip, self.lengths[clip], hop=self.grid,
                                classes=self.classes, projection=self.projection,
                                edges=self.edges)}

    def waveforms(self) -> Iterator[tuple[torch.Tensor, int]]:
        """Every clip's waveform and sample rate, in order (what an encoder cache needs)."""
        for clip in self.ids:
            yield self.audio(clip), self.sample_rate
