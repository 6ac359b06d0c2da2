"""The controlled benchmark as a ``LightningDataModule``: builds it on first use (or says how),
batches waveforms with frame targets on the contract grid, and hands the exact monitor the
split's reference events and durations."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch import LightningDataModule
from torch.utils.data import DataLoader

from sedcontract.data.build import build_controlled
from sedcontract.data.dataset import TARGETS, ControlledDataset
from sedcontract.data.options import SPLITS, check_sizes
from sedcontract.data.scenes import CLASSES
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList, read_durations, read_events

log = logging.getLogger(__name__)



def collate(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Stack a batch, zero-padding waveforms and targets to the longest item; ``frames`` and
    ``samples`` keep each item's own length."""
    samples = torch.tensor([len(item["waveform"]) for item in items])
    frames = torch.tensor([item["activity"].shape[-1] for item in items])
    waveform = torch.zeros(len(items), int(samples.max()))
    for i, item in enumerate(items):
        waveform[i, :len(item["waveform"])] = item["waveform"]
    batch: dict[str, Any] = {"id": [item["id"] for item in items], "waveform": waveform,
                             "samples": samples, "frames": frames}
    for key in TARGETS:
        target = torch.zeros(len(items), items[0][key].shape[0], int(frames.max()))
        for i, item in enumerate(items):
            target[i, :, :item[key].shape[-1]] = item[key]
        batch[key] = target
    return batch


class ControlledDataModule(LightningDataModule):
    """Train / validation / test splits of ``root/controlled`` (see
    :func:`sedcontract.data.build.build_controlled`)."""

    def __init__(self, root: str | Path, *, classes: Sequence[str] = CLASSES,
                 hop: float = 0.02, projection: str = "center",
                 edges: str = "open", batch_size: int = 16, num_workers: int = 0,
                 build: bool = True, seed: int = 0, sizes: Mapping[str, int] | None = None,
                 speech_source: str = "auto", librispeech_root: str | None = None,
                 train_split: str = "train", val_split: str = "validation",
                 test_split: str = "test") -> None:
        super().__init__()
        for name, value, least in (("batch_size", batch_size, 1), ("num_workers", num_workers, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise SedContractError(f"data.{name} must be an integer >= {least}, got "
                                       f"{value!r}")
        if sizes is not None:
            sizes = check_sizes(sizes, "data.sizes")
        self.root, self.hop, self.projection, self.edges = Path(root), hop, projection, edges
        self.batch_size, self.num_workers = batch_size, num_workers
        self.build, self.seed, self.sizes = build, seed, dict(sizes) if sizes else None
        self.speech_source, self.librispeech_root = speech_source, librispeech_root
        self.train_split, self.val_split, self.test_split = train_split, val_split, test_split
        unknown = [c for c in classes if c not in CLASSES]
        if unknown or not classes:
            raise SedContractError(f"the controlled benchmark has classes "
                                   f"{', '.join(CLASSES)}; got {list(classes)}")
        self.classes: tuple[str, ...] = tuple(classes)
        self.sample_rate = 16_000
        self.datasets: dict[str, ControlledDataset] = {}

    @property
    def folder(self) -> Path:
        return self.root / "controlled"

    def prepare_data(self) -> None:
        """Build (or verify) the benchmark; without ``build``, explain how to get it."""
        if self.build:
            build_controlled(self.root, seed=self.seed, sizes=self.sizes,
                             speech_source=self.speech_source,
                             librispeech_root=self.librispeech_root, log=log.info)
            return
        splits = self.sizes or SPLITS
        missing = [s for s in splits if not (self.folder / f"{s}.jsonl").exists()]
        if missing:
            raise SedContractError(
                f"the controlled benchmark has no {missing[0]!r} split in {self.folder}; build "
                f"it with `sedcontract data build controlled --root {self.root}` or set "
                "data.build=true")

    def dataset(self, split: str) -> ControlledDataset:
        self.check_split(split)
        if split not in self.datasets:
            self.datasets[split] = ControlledDataset(self.root, split, hop=self.hop,
                                                     classes=self.classes,
                                                     projection=self.projection,
                                                     edges=self.edges)
        return self.datasets[split]

    def reference(self, split: str) -> tuple[EventList, dict[str, float]]:
        """Reference events of the declared classes and clip durations of ``split`` (the DCASE
        tsv files)."""
        self.check_split(split)
        events = read_events(self.folder / f"{split}.tsv")
        if set(events.classes) - set(self.classes):
            events = events.select(classes=self.classes)
        return events, read_durations(self.folder / f"{split}_durations.tsv")

    def check_split(self, split: str) -> None:
        """Refuse a split the benchmark does not have, naming the ones it has."""
        splits = list(self.sizes or SPLITS)
        if split not in splits:
            raise SedContractError(f"unknown split {split!r}; the controlled benchmark has "
                                   f"{', '.join(splits)}")

    def dataloader(self, split: str, *, shuffle: bool = False) -> DataLoader:
        return DataLoader(self.dataset(split), batch_size=self.batch_size, shuffle=shuffle,
                          num_workers=self.num_workers, collate_fn=collate,
                          persistent_workers=self.num_workers > 0)

    def train_dataloader(self) -> DataLoader:
        return self.dataloader(self.train_split, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self.dataloader(self.val_split)

    def test_dataloader(self) -> DataLoader:
        return self.dataloader(self.test_split)
