"""The corpora as ``LightningDataModule``s: the controlled benchmark (built on first use, or
says how) and MAESTRO Real (windows of long files). Each batches waveforms with frame targets
on the contract grid and hands the exact monitor the split's reference events, durations and
(for windowed corpora) the windows to merge."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch import LightningDataModule
from torch.utils.data import DataLoader

from sedcontract.contracts.policy import AuditPolicy
from sedcontract.data.build import build_controlled
from sedcontract.data.dataset import TARGETS, ControlledDataset
from sedcontract.data.maestro import MaestroCorpus, MaestroFile, class_list, folds, read_corpus
from sedcontract.data.maestro_dataset import MaestroFiles, MaestroWindows
from sedcontract.data.options import SPLITS, check_sizes
from sedcontract.data.scenes import CLASSES
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList, read_durations, read_events
from sedcontract.traces.soft import SoftLabels

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


def _policy(policy: AuditPolicy) -> AuditPolicy:
    """The run's policy, handed in (a datamodule never builds one)."""
    if not isinstance(policy, AuditPolicy):
        raise SedContractError(f"a datamodule takes the run's AuditPolicy, got "
                               f"{type(policy).__name__}")
    return policy


class PolicyGrid:
    """The contract grid of a datamodule, read from the run's policy (never a copy)."""

    policy: AuditPolicy

    @property
    def hop(self) -> float:
        return self.policy.hop

    @property
    def projection(self) -> str:
        return self.policy.projection

    @property
    def edges(self) -> str:
        return self.policy.edges


class ControlledDataModule(PolicyGrid, LightningDataModule):
    """Train / validation / test splits of ``root/controlled`` (see
    :func:`sedcontract.data.build.build_controlled`)."""

    def __init__(self, root: str | Path, *, classes: Sequence[str] = CLASSES,
                 policy: AuditPolicy, batch_size: int = 16, num_workers: int = 0,
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
        self.root, self.policy = Path(root), _policy(policy)
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

    def windows(self, split: str) -> None:
        """The controlled benchmark's clips are whole: no windows to merge."""
        return None

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


def collate_files(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A batch of whole files: every window of each file, as :func:`collate` stacks them."""
    return collate([window for item in items for window in item["windows"]])


class MaestroDataModule(PolicyGrid, LightningDataModule):
    """MAESTRO Real development files (see :mod:`sedcontract.data.maestro`): a 5-fold split
    by scene, one fold held out for validation (and test: the evaluation set's labels are not
    public). Training batches are windows; evaluation batches are whole files whose window
    scores the monitor merges back to file time."""

    def __init__(self, root: str | Path, *, classes: str | Sequence[str] = "evaluated",
                 policy: AuditPolicy, batch_size: int = 16,
                 eval_files: int = 1, num_workers: int = 0,
                 window: float = 10.0, train_hop: float = 5.0, eval_hop: float = 5.0,
                 fold: int = 0, folds: int = 5,
                 validation_files: Sequence[str] | None = None, durations: str | None = None,
                 sample_rate: int = 16_000, train_split: str = "train",
                 val_split: str = "validation", test_split: str = "test") -> None:
        super().__init__()
        for name, value, least in (("batch_size", batch_size, 1), ("eval_files", eval_files, 1),
                                   ("num_workers", num_workers, 0), ("folds", folds, 2)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise SedContractError(f"data.{name} must be an integer >= {least}, got "
                                       f"{value!r}")
        if not (isinstance(fold, int) and 0 <= fold < folds):
            raise SedContractError(f"data.fold must be one of 0 … {folds - 1}, got {fold!r}")
        self.policy = _policy(policy)
        hop = self.policy.hop
        hop_us = round(hop * 1e6)
        for name, value in (("window", window), ("train_hop", train_hop),
                            ("eval_hop", eval_hop)):
            if not value > 0 or round(value * 1e6) % hop_us:
                raise SedContractError(f"data.{name} must be a positive multiple of the grid "
                                       f"hop {hop:g} s, got {value!r}")
        if train_hop > window or eval_hop > window:
            raise SedContractError("window hops longer than the window leave time unseen")
        self.root = Path(root)
        self.classes: tuple[str, ...] = class_list(classes if isinstance(classes, str)
                                                   else list(classes))
        self.batch_size, self.eval_files, self.num_workers = batch_size, eval_files, num_workers
        self.window, self.train_hop, self.eval_hop = window, train_hop, eval_hop
        self.fold, self.folds, self.durations_path = fold, folds, durations
        self.validation_files = None if validation_files is None else list(validation_files)
        self.sample_rate = sample_rate
        self.train_split, self.val_split, self.test_split = train_split, val_split, test_split
        self.corpus: MaestroCorpus | None = None
        self.datasets: dict[str, MaestroWindows | MaestroFiles] = {}

    def prepare_data(self) -> None:
        """Read the corpus once (nothing is downloaded: scripts/fetch_maestro_real.py does)."""
        self.load()

    def load(self) -> MaestroCorpus:
        """The corpus, read on first use."""
        if self.corpus is None:
            self.corpus = read_corpus(self.root, classes=self.classes,
                                      durations=self.durations_path)
        return self.corpus

    def files(self, split: str) -> list[MaestroFile]:
        """The files of ``split``: the held-out ones (``validation_files``, else fold
        ``fold``) for validation and test, the rest for training."""
        if split not in (self.train_split, self.val_split, self.test_split):
            raise SedContractError(f"unknown split {split!r}; MAESTRO Real has "
                                   f"{self.train_split}, {self.val_split}, {self.test_split}")
        corpus = self.load()
        if self.validation_files is not None:
            known = {f.file for f in corpus.files}
            unknown = [f for f in self.validation_files if f not in known]
            if unknown:
                raise SedContractError(f"data.validation_files names {unknown[0]!r}, which is "
                                       f"not one of the {len(known)} annotated files under "
                                       f"{self.root}")
            held = set(self.validation_files)
        else:
            fold_of = folds(corpus.files, self.folds)
            held = {f.file for f in corpus.files if fold_of[f.file] == self.fold}
        held_out = split != self.train_split
        return [f for f in corpus.files if (f.file in held) == held_out]

    def dataset(self, split: str) -> MaestroWindows | MaestroFiles:
        if split not in self.datasets:
            corpus = self.load()
            training = split == self.train_split
            windows = MaestroWindows(self.files(split), corpus.reference, corpus.durations,
                                     length=self.window,
                                     hop=self.train_hop if training else self.eval_hop,
                                     grid=self.hop, classes=self.classes,
                                     projection=self.projection, edges=self.edges,
                                     sample_rate=self.sample_rate)
            self.datasets[split] = windows if training else MaestroFiles(windows)
        return self.datasets[split]

    def reference(self, split: str) -> tuple[EventList, dict[str, float]]:
        """File-level reference events and durations of ``split``."""
        corpus = self.load()
        names = [f.file for f in self.files(split)]
        return corpus.reference.select(clips=names), {n: corpus.durations[n] for n in names}

    def soft(self, split: str) -> SoftLabels:
        """The soft labels of ``split``'s files (for the report's softness rows)."""
        return self.load().soft.select([f.file for f in self.files(split)])

    def windows(self, split: str) -> dict[str, tuple[str, float, float]]:
        return self.dataset(split).by_id()

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.dataset(self.train_split), batch_size=self.batch_size,
                          shuffle=True, num_workers=self.num_workers, collate_fn=collate,
                          persistent_workers=self.num_workers > 0)

    def eval_dataloader(self, split: str) -> DataLoader:
        return DataLoader(self.dataset(split), batch_size=self.eval_files,
                          num_workers=self.num_workers, collate_fn=collate_files,
                          persistent_workers=self.num_workers > 0)

    def val_dataloader(self) -> DataLoader:
        return self.eval_dataloader(self.val_split)

    def test_dataloader(self) -> DataLoader:
        return self.eval_dataloader(self.test_split)
