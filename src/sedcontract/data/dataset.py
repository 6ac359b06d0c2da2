"""The controlled benchmark as a torch ``Dataset``: waveform, frame targets on the contract
grid (activity, onset, offset per class, from the same projection the monitor uses), events
and metadata. No Lightning here; the training layer wraps it."""

from __future__ import annotations

import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from sedcontract.data.build import read_jsonl
from sedcontract.data.scenes import CLASSES
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList, TraceSet
from sedcontract.traces.activity import offset, onset
from sedcontract.traces.tsv import regular_file

TARGETS: tuple[str, ...] = ("activity", "onset", "offset")  # frame targets = detector heads


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """A 16-bit PCM mono wav as float32 in [−1, 1] and its sample rate."""
    with wave.open(str(regular_file(path))) as f:
        if f.getsampwidth() != 2 or f.getnchannels() != 1:
            raise SedContractError(f"{path}: expected 16-bit mono wav")
        data = np.frombuffer(f.readframes(f.getnframes()), dtype="<i2")
        return (data / 32768.0).astype(np.float32), f.getframerate()


def frame_targets(events: EventList, clip: str, duration: float, *, hop: float,
                  classes: tuple[str, ...], projection: str, edges: str
                  ) -> dict[str, torch.Tensor]:
    """Activity, onset and offset targets ``[classes, frames]`` of one clip's events, from the
    projection the monitor uses."""
    traces = TraceSet.from_events(events, EventList.from_rows([], clips=(clip,)), hop=hop,
                                  durations={clip: duration}, classes=classes,
                                  projection=projection)
    active = traces.dense("ref")[0]
    return {"activity": torch.from_numpy(active.astype(np.float32)),
            "onset": torch.from_numpy(onset(active, edges).astype(np.float32)),
            "offset": torch.from_numpy(offset(active, edges).astype(np.float32))}


class ControlledDataset(Dataset):
    """Items of one split of ``root/controlled`` (see ``sedcontract data build controlled``).

    Frame ``k`` of the targets covers ``[k·hop, (k+1)·hop)``; a frame is active under the
    declared ``projection`` (default ``center``), onsets/offsets follow the clip-edge policy.
    """

    def __init__(self, root: str | Path, split: str, *, hop: float = 0.02,
                 classes: tuple[str, ...] = CLASSES, projection: str = "center",
                 edges: str = "open") -> None:
        self.folder = Path(root) / "controlled"
        manifest = self.folder / f"{split}.jsonl"
        if not manifest.exists():
            raise SedContractError(f"{manifest} not found; build the benchmark first: "
                                   f"sedcontract data build controlled --root {root}")
        self.items = read_jsonl(manifest)
        self.split, self.hop, self.classes = split, hop, tuple(classes)
        self.projection, self.edges = projection, edges

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict[str, Any]:
        item = self.items[index]
        audio, sr = read_wav(self.folder / item["audio"])
        duration = len(audio) / sr
        events = EventList.from_rows([(item["id"], on, off, label)
                                      for on, off, label in item["events"]
                                      if label in self.classes],
                                     clips=(item["id"],))
        return {
            "id": item["id"],
            "waveform": torch.from_numpy(audio),
            "sample_rate": sr,
            **frame_targets(events, item["id"], duration, hop=self.hop, classes=self.classes,
                            projection=self.projection, edges=self.edges),
            "events": item["events"],
            "perturbation": item["perturbation"],
        }

    def waveforms(self) -> Iterator[tuple[torch.Tensor, int]]:
        """Every clip's waveform and sample rate, in order (what an encoder cache needs)."""
        for item in self.items:
            audio, sr = read_wav(self.folder / item["audio"])
            yield torch.from_numpy(audio), sr
