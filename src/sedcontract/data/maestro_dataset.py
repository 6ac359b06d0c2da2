"""MAESTRO Real as torch ``Dataset``s: windows of the long files with frame targets cut from
the file's hard reference (training), and whole files as the list of their windows
(evaluation: every window of a file travels in one batch, so the monitor can merge their
scores back to file time). No Lightning here."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch.utils.data import Dataset

from sedcontract.data.audio import read_audio
from sedcontract.data.dataset import frame_targets
from sedcontract.data.maestro import MaestroFile
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList
from sedcontract.traces.windows import window_id, window_starts


class MaestroWindows(Dataset):
    """Windows ``[start, end)`` of ``length`` seconds every ``hop`` seconds of each file, as
    items like the controlled benchmark's: waveform at ``sample_rate`` (mono) and targets."""

    def __init__(self, files: Sequence[MaestroFile], reference: EventList,
                 durations: dict[str, float], *, length: float, hop: float, grid: float,
                 classes: tuple[str, ...], projection: str = "center", edges: str = "open",
                 sample_rate: int = 16_000) -> None:
        no_audio = [f.file for f in files if f.audio is None]
        if no_audio:
            raise SedContractError(f"no audio for MAESTRO file(s) {', '.join(no_audio[:3])}: "
                                   "training and evaluation need development_audio/")
        self.files = {f.file: f for f in files}
        self.reference, self.durations = reference, durations
        self.grid, self.classes, self.projection, self.edges = grid, classes, projection, edges
        self.sample_rate = sample_rate
        self.windows = [(f.file, start, end) for f in files
                        for start, end in window_starts(durations[f.file], length, hop)]
        self.events_of = {f.file: reference.for_clip(f.file) for f in files}

    def __len__(self) -> int:
        return len(self.windows)

    def by_id(self) -> dict[str, tuple[str, float, float]]:
        """``{window id: (file, start, end)}``: what the monitor needs to merge scores."""
        return {window_id(*w): w for w in self.windows}

    def audio(self, file: str, start: float, end: float) -> torch.Tensor:
        """Samples ``[start, end)`` of a file, mono, at the dataset's sample rate."""
        return read_audio(self.files[file].audio, self.sample_rate, start=start, stop=end,
                          option="data.window")

    def item(self, file: str, start: float, end: float) -> dict[str, Any]:
        events = self.events_of[file]
        keep = (events.offset > start) & (events.onset < end)
        inside = EventList.from_rows(
            [(file, max(on, start) - start, min(off, end) - start, label)
             for on, off, label in zip(events.onset[keep].tolist(), events.offset[keep].tolist(),
                                       events.label[keep].tolist(), strict=True)],
            clips=(file,))
        wid = window_id(file, start, end)
        return {"id": wid, "waveform": self.audio(file, start, end),
                "sample_rate": self.sample_rate,
                **frame_targets(inside, file, end - start, hop=self.grid, classes=self.classes,
                                projection=self.projection, edges=self.edges)}

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.item(*self.windows[index])

    def waveforms(self) -> Iterator[tuple[torch.Tensor, int]]:
        for window in self.windows:
            yield self.audio(*window), self.sample_rate


class MaestroFiles(Dataset):
    """Whole files: item ``i`` is ``{"id": file, "windows": [window items]}``."""

    def __init__(self, windows: MaestroWindows) -> None:
        self.windows = windows
        self.groups: dict[str, list[int]] = {}
        for k, (file, _, _) in enumerate(windows.windows):
            self.groups.setdefault(file, []).append(k)
        self.ids = list(self.groups)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int) -> dict[str, Any]:
        file = self.ids[index]
        return {"id": file, "windows": [self.windows[k] for k in self.groups[file]]}

    def by_id(self) -> dict[str, tuple[str, float, float]]:
        return self.windows.by_id()

    def waveforms(self) -> Iterator[tuple[torch.Tensor, int]]:
        return self.windows.waveforms()

