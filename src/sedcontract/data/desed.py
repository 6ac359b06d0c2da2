"""DESED (DCASE Task 4 domestic sounds): 10 s clips, strong labels of 10 classes. The ground
truth is a DCASE event tsv naming only the clips that have events; the durations tsv names
them all (``sedcontract audit --clips durations``).

A local copy in the DCASE Task 4 baseline's layout (``LAYOUT``, its ``confs/sed.yaml`` keys)
is read one strong-labelled set at a time by :func:`read_set` (for training: no Lightning)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.data.audio import MAX_AUDIO_SECONDS, audio_info, check_length
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.traces import EventList, read_events
from sedcontract.traces.overrun import DURATION_TOLERANCE, fit_to_durations
from sedcontract.traces.tsv import (
    EVENT_COLUMNS,
    read_duration_rows,
    read_fields,
    write_durations,
)

CLASSES = ("Alarm_bell_ringing", "Blender", "Cat", "Dishes", "Dog",
           "Electric_shaver_toothbrush", "Frying", "Running_water", "Speech", "Vacuum_cleaner")


def _visible(path: Path, root: Path) -> bool:
    """Not hidden under ``root``: no part starts with a dot (``._x.wav``, ``.DS_Store``) or is
    ``__MACOSX`` (what archives made on macOS add beside every file)."""
    return not any(part.startswith(".") or part == "__MACOSX"
                   for part in path.relative_to(root).parts)


def locate(root: str | Path) -> tuple[Path, Path]:
    """The ground-truth tsv (the one event tsv under ``root``) and the audio folder (the one
    holding the most ``.wav`` files) of an extracted DESED archive; hidden files and folders
    are not the archive's."""
    root = Path(root)
    truths = []
    for path in sorted(p for p in root.rglob("*.tsv") if _visible(p, root)):
        rows = read_fields(path)
        if rows and set(EVENT_COLUMNS) <= {f.lower() for f in rows[0][1]}:
            truths.append(path)
    if len(truths) != 1:
        raise SedContractError(f"expected one ground-truth tsv ({' '.join(EVENT_COLUMNS)}) under "
                               f"{root}, found {len(truths)}: "
                               f"{', '.join(str(p) for p in truths[:4]) or 'none'}")
    folders: dict[Path, int] = {}
    for wav in root.rglob("*.wav"):
        if _visible(wav, root):
            folders[wav.parent] = folders.get(wav.parent, 0) + 1
    if not folders:
        raise SedContractError(f"no .wav files under {root}")
    return truths[0], max(sorted(folders), key=folders.get)


def durations_of(audio: Mapping[str, Path]) -> dict[str, float]:
    """``{clip: seconds}`` from the headers of the clips' audio files (each checked:
    :func:`~sedcontract.data.audio.audio_info`)."""
    return {clip: audio_info(wav).seconds for clip, wav in audio.items()}


def write_durations_of(audio: Path, path: Path) -> int:
    """Write the durations tsv of every ``.wav`` in ``audio`` (hidden files are not clips);
    returns how many."""
    durations = durations_of(audio_files(audio))
    write_durations(path, durations)
    return len(durations)


# the strong-labelled sets of the DCASE 2021 Task 4 baseline (confs/sed.yaml, data section),
# relative to the dataset root; the 2022–2024 baselines keep these names (some under
# ``dcase_synth/``). ``*_dur`` is a durations tsv; the training set has none (clips of 10 s).
LAYOUT = {
    "synth_folder": "audio/train/synthetic21_train/soundscapes_16k",
    "synth_tsv": "metadata/train/synthetic21_train/soundscapes.tsv",
    "synth_val_folder": "audio/validation/synthetic21_validation/soundscapes_16k",
    "synth_val_tsv": "metadata/validation/synthetic21_validation/soundscapes.tsv",
    "synth_val_dur": "metadata/validation/synthetic21_validation/durations.tsv",
    "test_folder": "audio/validation/validation_16k",
    "test_tsv": "metadata/validation/validation.tsv",
    "test_dur": "metadata/validation/validation_durations.tsv",
}
SETS = {"synth": "strong synthetic training set", "synth_val": "synthetic validation set",
        "test": "real validation set"}
MISSING_AUDIO = ("error", "skip")
CLIP_LENGTH = 10.0  # seconds: DESED's clips, and what a training clip is cut or padded to


def layout_of(layout: Mapping[str, Any] | None) -> dict[str, str | None]:
    """The copy's layout: :data:`LAYOUT` with the paths ``layout`` gives in their place (a path
    relative to the root, or absolute; None for a file the copy lacks); an unknown key is
    refused, naming the keys."""
    given = {} if layout is None else layout
    if not isinstance(given, Mapping):
        raise SedContractError(f"data.layout must map the paths {', '.join(LAYOUT)} to "
                               f"paths, got {given!r}")
    unknown = [str(k) for k in given if k not in LAYOUT]
    if unknown:
        raise SedContractError(f"data.layout.{unknown[0]} is not a path of the layout (its "
                               f"paths: {', '.join(LAYOUT)})")
    for key, value in given.items():
        if value is not None and not isinstance(value, str | Path):
            raise SedContractError(f"data.layout.{key} must be a path, got {value!r}")
    return {**LAYOUT, **{k: None if v is None else str(v) for k, v in given.items()}}


def set_paths(root: str | Path, key: str, paths: Mapping[str, str | Path | None]
              ) -> dict[str, Path | None]:
    """The folder, tsv and durations tsv of set ``key`` (``synth``, ``synth_val``, ``test``):
    ``paths[f"{key}_folder"]`` etc. under ``root`` (an absolute path stays as it is)."""
    out: dict[str, Path | None] = {}
    for part in ("folder", "tsv", "dur"):
        value = paths.get(f"{key}_{part}")
        out[part] = None if value is None else Path(root) / value
    return out


@dataclass(frozen=True)
class DesedSet:
    """One strong-labelled set: each clip's audio file, the reference (every clip listed, events
    cut at their clip's end where they overrun it by at most the tolerance) and durations."""

    key: str
    audio: dict[str, Path]
    reference: EventList
    durations: dict[str, float]
    cut: int             # reference events cut at their clip's end
    skipped: tuple[str, ...]  # clips without audio, left out (missing_audio="skip")
    rates: dict[str, int] = field(default_factory=dict)  # each clip's sample rate (header)


def check_labels(events: EventList, classes: tuple[str, ...] = CLASSES) -> None:
    """Refuse a label outside ``classes``, naming the tsv file and row."""
    known = set(classes)
    bad = np.flatnonzero([label not in known for label in events.label])
    if bad.size:
        i = int(bad[0])
        raise TraceFormatError(f"label {events.label[i]!r} is not one of the {len(classes)} "
                               f"DESED classes ({', '.join(classes)})", **events.where(i),
                               column="event_label")


def _existing(path: Path | None, key: str, *, folder: bool) -> Path:
    """``path`` if it is a folder (or a regular file), else an error naming the config key."""
    if path is None:
        raise SedContractError(f"data.layout.{key} is not set; give the path of the "
                               f"{'folder' if folder else 'file'} (relative to data.root)")
    if folder and not path.is_dir():
        what = "is not a folder" if path.exists() else "does not exist"
        raise SedContractError(f"data.layout.{key}: {path} {what}; set data.layout.{key} "
                               "(relative to data.root) to where the copy holds it")
    if not folder and not path.is_file():
        what = "is not a regular file" if path.exists() else "does not exist"
        raise SedContractError(f"data.layout.{key}: {path} {what}; set data.layout.{key} "
                               "(relative to data.root) to where the copy holds it")
    return path


def audio_files(folder: Path) -> dict[str, Path]:
    """``{clip id: path}`` of the ``.wav`` files in ``folder`` (not its subfolders)."""
    return {p.stem: p for p in sorted(folder.iterdir())
            if p.suffix.lower() == ".wav" and not p.name.startswith(".")}


def check_missing_audio(value: str) -> None:
    """Refuse a ``missing_audio`` that is not one of :data:`MISSING_AUDIO`."""
    if value not in MISSING_AUDIO:
        raise SedContractError(f"data.missing_audio must be one of {', '.join(MISSING_AUDIO)}, "
                               f"got {value!r}")


def read_set(key: str, folder: Path | None, tsv: Path | None,
             durations: Path | float | None, *, missing_audio: str = "error",
             max_seconds: float = MAX_AUDIO_SECONDS) -> DesedSet:
    """Set ``key``'s clips: those its tsv names (a filename-only row is a clip without events),
    or its durations tsv (``durations``, a path) names; ``durations`` a number gives every
    clip that length, None reads it from the audio headers. Labels must be DESED classes.
    Every clip's audio header is read here (a file that is not audio, or a broken rate, is
    refused before training starts), and no clip may be longer than ``max_seconds``."""
    check_missing_audio(missing_audio)
    folder = _existing(folder, f"{key}_folder", folder=True)
    events = read_events(_existing(tsv, f"{key}_tsv", folder=False))
    check_labels(events)
    if isinstance(durations, Path):
        rows = read_duration_rows(_existing(durations, f"{key}_dur", folder=False))
        lengths = {clip: value for clip, (value, _) in rows.items()}
        unlisted = [c for c in events.clips if c not in lengths]
        if unlisted:
            raise TraceFormatError(f"clip {unlisted[0]!r} has no duration in {durations} "
                                   f"(data.layout.{key}_dur; {len(unlisted)} such clip(s)): "
                                   "are the two files of one set?",
                                   **events.where_clip(unlisted[0]), column="filename")
        clips = list(dict.fromkeys([*lengths, *events.clips]))
    else:
        clips = list(events.clips)
    found = audio_files(folder)
    absent = tuple(c for c in clips if c not in found)
    if absent and missing_audio == "error":
        raise SedContractError(
            f"{len(absent)} clip(s) of {tsv} have no .wav in {folder} (data.layout.{key}_folder), "
            f"first: {absent[0]}.wav; point data.layout.{key}_folder at the set's audio, or leave "
            "them out with data.missing_audio=skip")
    kept = [c for c in clips if c in found]
    if not kept:
        raise SedContractError(f"no clip of {tsv} has its .wav in {folder} "
                               f"(data.layout.{key}_folder)")
    audio = {c: found[c] for c in kept}
    infos = {c: audio_info(path) for c, path in audio.items()}  # every file is audio
    if isinstance(durations, Path):
        lengths = {c: lengths[c] for c in kept}
    elif durations is None:
        lengths = {c: info.seconds for c, info in infos.items()}
    else:
        lengths = dict.fromkeys(kept, float(durations))
    for clip, seconds in lengths.items():  # before any sample is allocated
        if seconds > max_seconds:
            where = f"{durations}, row {rows[clip][1]}, column 'duration'" \
                if isinstance(durations, Path) else str(audio[clip])
            check_length(seconds, max_seconds, where, "data.max_seconds")
    # events of a clip past its (rounded) duration by at most the tolerance are cut there; a
    # clip length given as a number is where the audio itself is cut: any event is cut there
    kept_events = events.select(clips=kept)
    tolerance = float(kept_events.offset.max(initial=0.0)) if isinstance(durations, int | float) \
        else DURATION_TOLERANCE
    reference, cut = fit_to_durations(kept_events, lengths, "ref", tolerance=tolerance)
    return DesedSet(key, audio, reference, lengths, cut.count, absent,
                    {c: info.rate for c, info in infos.items()})
