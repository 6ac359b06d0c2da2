"""The corpora as ``LightningDataModule``s: the controlled benchmark (built on first use, or
says how), MAESTRO Real (windows of long files) and DESED (10 s clips of its strong sets).
Each batches waveforms with frame targets on the contract grid and hands the exact monitor the
split's reference events, durations and (for windowed corpora) the windows to merge."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from lightning.pytorch import LightningDataModule
from torch.utils.data import DataLoader

from sedcontract.contracts.policy import AuditPolicy
from sedcontract.data.audio import MAX_AUDIO_SECONDS
from sedcontract.data.build import build_controlled
from sedcontract.data.dataset import TARGETS, ControlledDataset
from sedcontract.data.desed import CLASSES as DESED_CLASSES
from sedcontract.data.desed import (
    CLIP_LENGTH,
    SETS,
    DesedSet,
    check_missing_audio,
    layout_of,
    read_set,
    set_paths,
)
from sedcontract.data.desed_dataset import DesedClips
from sedcontract.data.maestro import MaestroCorpus, MaestroFile, class_list, folds, read_corpus
from sedcontract.data.maestro_dataset import MaestroFiles, MaestroWindows
from sedcontract.data.options import SPLITS, check_sizes
from sedcontract.data.scenes import CLASSES
from sedcontract.errors import SedContractError
from sedcontract.numbers import is_number, is_whole
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


class WholeClips:
    """Loaders of a corpus of whole clips (no windows to merge): batches of ``dataset(split)``
    items, shuffled for training."""

    batch_size: int
    num_workers: int
    train_split: str
    val_split: str
    test_split: str
    dataset: Callable[[str], Any]  # the split's items (each corpus defines it)

    def windows(self, split: str) -> None:
        """Whole clips: no windows to merge."""
        return None

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


class ControlledDataModule(WholeClips, PolicyGrid, LightningDataModule):
    """Train / validation / test splits of ``root/controlled`` (see
    :func:`sedcontract.data.build.build_controlled`)."""

    def __init__(self, root: str | Path, *, classes: Sequence[str] = CLASSES,
                 policy: AuditPolicy, batch_size: int = 16, num_workers: int = 0,
                 build: bool = True, rebuild: bool = False, seed: int = 0,
                 sizes: Mapping[str, int] | None = None,
                 speech_source: str = "auto", librispeech_root: str | None = None,
                 train_split: str = "train", val_split: str = "validation",
                 test_split: str = "test") -> None:
        super().__init__()
        for name, value, least in (("batch_size", batch_size, 1), ("num_workers", num_workers, 0)):
            if not is_whole(value) or value < least:
                raise SedContractError(f"data.{name} must be an integer >= {least}, got "
                                       f"{value!r}")
        if sizes is not None:
            sizes = check_sizes(sizes, "data.sizes")
        self.root, self.policy = Path(root), _policy(policy)
        self.batch_size, self.num_workers = batch_size, num_workers
        self.build, self.seed, self.sizes = build, seed, dict(sizes) if sizes else None
        self.rebuild = rebuild
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
                             librispeech_root=self.librispeech_root, log=log.info,
                             rebuild=self.rebuild)
            return
        splits = self.sizes or SPLITS
        missing = [s for s in splits if not (self.folder / f"{s}.jsonl").exists()]
        if missing:
            raise SedContractError(
                f"the controlled benchmark has no {missing[0]!r} split in {self.folder}; build "
                f"it with `sedcontract data build controlled --root {self.root}` or set "
                "data.build=true")

    def inputs(self) -> dict[str, list[Path]]:
        """The files the module reads, by the config key that names them (a run's outputs
        must not be one of them)."""
        splits = list(self.sizes or SPLITS)
        return {"data.root": [self.folder / "manifest.json",
                              *(self.folder / f"{s}{suffix}" for s in splits
                                for suffix in (".jsonl", ".tsv", "_durations.tsv"))]}

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
            if not is_whole(value) or value < least:
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

    def inputs(self) -> dict[str, list[Path]]:
        """The files the module reads, by the config key that names them."""
        found = {"data.root": [f.annotation for f in self.load().files]}
        if self.durations_path is not None:
            found["data.durations"] = [Path(self.durations_path)]
        return found

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


DESED_SPLITS = ("train", "validation", "test")
VALIDATION = ("auto", "synthetic", "held_out")


class DesedDataModule(WholeClips, PolicyGrid, LightningDataModule):
    """DESED's strong-labelled sets from a local copy in the Task 4 baseline's layout (see
    :data:`sedcontract.data.desed.LAYOUT`): ``train`` the strong synthetic training set,
    ``validation`` the synthetic validation set (``validation=auto`` when its tsv is there,
    else a ``held_out`` part of train), ``test`` the real validation set. Clips are cut or
    padded to ``clip_length`` for training; evaluation clips keep their listed durations.
    ``layout``: the copy's paths where they differ from the baseline's (:func:`layout_of`)."""

    def __init__(self, root: str | Path, *, policy: AuditPolicy,
                 classes: Sequence[str] = DESED_CLASSES, batch_size: int = 16,
                 num_workers: int = 0, clip_length: float = CLIP_LENGTH, sample_rate: int = 16_000,
                 validation: str = "auto", held_out: float = 0.1, seed: int = 0,
                 missing_audio: str = "error", max_seconds: float = MAX_AUDIO_SECONDS,
                 layout: Mapping[str, str | None] | None = None, train_split: str = "train",
                 val_split: str = "validation", test_split: str = "test") -> None:
        super().__init__()
        for name, value, least in (("batch_size", batch_size, 1), ("num_workers", num_workers, 0),
                                   ("sample_rate", sample_rate, 1)):
            if not is_whole(value) or value < least:
                raise SedContractError(f"data.{name} must be an integer >= {least}, got "
                                       f"{value!r}")
        if not is_number(clip_length) \
                or not clip_length > 0:
            raise SedContractError(f"data.clip_length must be a positive number of seconds, "
                                   f"got {clip_length!r}")
        if not is_number(max_seconds) \
                or not 0 < max_seconds < float("inf"):
            raise SedContractError(f"data.max_seconds must be a positive number of seconds, "
                                   f"got {max_seconds!r}")
        if clip_length > max_seconds:
            raise SedContractError(f"data.clip_length ({clip_length:g} s) is more than "
                                   f"data.max_seconds ({max_seconds:g} s)")
        if validation not in VALIDATION:
            raise SedContractError(f"data.validation must be one of {', '.join(VALIDATION)}, "
                                   f"got {validation!r}")
        if not is_number(held_out) \
                or not 0 < held_out < 1:
            raise SedContractError(f"data.held_out must be a fraction in (0, 1), got "
                                   f"{held_out!r}")
        check_missing_audio(missing_audio)
        unknown = [c for c in classes if c not in DESED_CLASSES]
        if unknown or not classes:
            raise SedContractError(f"unknown DESED class(es) {unknown or list(classes)}; the "
                                   f"classes are {', '.join(DESED_CLASSES)}")
        for name, split in (("train_split", train_split), ("val_split", val_split),
                            ("test_split", test_split)):
            if split not in DESED_SPLITS:
                raise SedContractError(f"unknown split {split!r} ({name}); DESED has "
                                       f"{', '.join(DESED_SPLITS)}")
        self.root, self.policy = Path(root), _policy(policy)
        self.classes: tuple[str, ...] = tuple(classes)
        self.batch_size, self.num_workers = batch_size, num_workers
        self.clip_length, self.sample_rate = float(clip_length), sample_rate
        self.validation, self.held_out, self.seed = validation, float(held_out), seed
        self.missing_audio, self.max_seconds = missing_audio, float(max_seconds)
        self.paths = layout_of(layout)
        self.train_split, self.val_split, self.test_split = train_split, val_split, test_split
        self.sets: dict[str, DesedSet] = {}
        self.held: set[str] | None = None
        self.datasets: dict[str, DesedClips] = {}

    def prepare_data(self) -> None:
        """Read the evaluated split's set (nothing is downloaded: scripts/fetch_desed.py
        arranges a local copy); the others are read on first use."""
        self.set_of(self.val_split)

    def setup(self, stage: str) -> None:
        """Fitting reads the training set too, so a bad copy stops the run before it starts."""
        if stage == "fit":
            self.set_of(self.train_split)

    def read(self, key: str) -> DesedSet:
        """Set ``key`` (``synth``, ``synth_val``, ``test``), read on first use."""
        if key not in self.sets:
            paths = set_paths(self.root, key, self.paths)
            durations = self.clip_length if key == "synth" else paths["dur"]
            found = read_set(key, paths["folder"], paths["tsv"], durations,
                             missing_audio=self.missing_audio, max_seconds=self.max_seconds)
            log.info("DESED %s: %d clips, %d reference events from %s (%d cut at their clip's "
                     "end, %d clip(s) without audio left out)", SETS[key],
                     len(found.durations), len(found.reference), paths["tsv"], found.cut,
                     len(found.skipped))
            self.sets[key] = found
        return self.sets[key]

    def inputs(self) -> dict[str, list[Path]]:
        """The tsv files the module reads, by the config key that names them."""
        found: dict[str, list[Path]] = {}
        for key in SETS:
            paths = set_paths(self.root, key, self.paths)
            for part in ("tsv", "dur"):
                if paths[part] is not None:
                    found[f"data.layout.{key}_{part}"] = [paths[part]]
        return found

    def synthetic_validation(self) -> bool:
        """Whether ``validation`` is the synthetic validation set (else held out of train)."""
        if self.validation == "auto":
            tsv = set_paths(self.root, "synth_val", self.paths)["tsv"]
            return tsv is not None and tsv.exists()
        return self.validation == "synthetic"

    def held_out_clips(self) -> set[str]:
        """The training clips held out for validation: a ``held_out`` fraction (at least one)
        drawn with ``seed`` from the sorted clip ids."""
        if self.held is None:
            clips = sorted(self.read("synth").durations)
            if len(clips) < 2:
                raise SedContractError(f"data.validation={self.validation} holds out part of "
                                       f"the training set, which has {len(clips)} clip(s)")
            count = min(len(clips) - 1, max(1, round(self.held_out * len(clips))))
            order = np.random.default_rng(self.seed).permutation(len(clips))
            self.held = {clips[i] for i in order[:count]}
            log.info("DESED validation: %d clips held out of the %d of the training set "
                     "(data.held_out=%g, no synthetic validation tsv)", count, len(clips),
                     self.held_out)
        return self.held

    def set_of(self, split: str) -> tuple[DesedSet, list[str]]:
        """The set a split is read from and the split's clips."""
        if split not in DESED_SPLITS:
            raise SedContractError(f"unknown split {split!r}; DESED has "
                                   f"{', '.join(DESED_SPLITS)}")
        if split == "test":
            found = self.read("test")
            return found, list(found.durations)
        if split == "validation" and self.synthetic_validation():
            found = self.read("synth_val")
            return found, list(found.durations)
        found = self.read("synth")
        held = set() if split == "train" and self.synthetic_validation() \
            else self.held_out_clips()
        return found, [c for c in found.durations if (c in held) == (split == "validation")]

    def dataset(self, split: str) -> DesedClips:
        if split not in self.datasets:
            found, clips = self.set_of(split)
            reference = found.reference.select(classes=self.classes)
            self.datasets[split] = DesedClips(found.audio, reference,
                                              {c: found.durations[c] for c in clips},
                                              grid=self.hop, classes=self.classes,
                                              projection=self.projection, edges=self.edges,
                                              sample_rate=self.sample_rate,
                                              rates=found.rates, max_seconds=self.max_seconds)
        return self.datasets[split]

    def reference(self, split: str) -> tuple[EventList, dict[str, float]]:
        """Reference events of the declared classes (every clip listed) and durations of
        ``split``."""
        found, clips = self.set_of(split)
        events = found.reference.select(clips=clips)
        if set(events.classes) - set(self.classes):
            events = events.select(classes=self.classes)
        return events, {c: found.durations[c] for c in clips}
