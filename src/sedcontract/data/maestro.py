"""MAESTRO Real (development set, Zenodo record 7244360) read from a local copy.

Layout as the two archives extract (``root`` may hold them at any depth)::

    development_audio/<scene>/<file>.wav
    development_annotation/soft_labels_<scene>/<file>.txt   (onset offset label soft)

Soft labels become hard reference events with ``soft > 0.5``; the 11 classes the DCASE
evaluation scores are the default, all 17 on request. Files (about 3 min long) are cut into
windows for training and their scores merged back to file time for evaluation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sedcontract.data.audio import audio_info
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.outputs import Outputs
from sedcontract.traces import EventList, read_durations
from sedcontract.traces.soft import (
    SEGMENT,
    SoftLabels,
    annotation_rows,
    collect,
    read_soft_tsv,
    soft_tsv,
)
from sedcontract.traces.tsv import durations_tsv, events_tsv, regular_file, with_clips

SCENES = ("cafe_restaurant", "city_center", "grocery_store", "metro_station", "residential_area")
# the 17 annotated classes (the DCASE 2024 Task 4 order) and the 11 the evaluation scores
CLASSES = ("cutlery and dishes", "furniture dragging", "people talking", "children voices",
           "coffee machine", "footsteps", "large_vehicle", "car", "brakes_squeaking",
           "cash register beeping", "announcement", "shopping cart", "metro leaving",
           "metro approaching", "door opens/closes", "wind_blowing", "birds_singing")
EVALUATED = ("birds_singing", "car", "people talking", "footsteps", "children voices",
             "wind_blowing", "brakes_squeaking", "large_vehicle", "cutlery and dishes",
             "metro approaching", "metro leaving")
LAYOUT = ("<root>/development_annotation/soft_labels_<scene>/<file>.txt and "
          "<root>/development_audio/<scene>/<file>.wav")
FOLDS = 5


def class_list(classes: str | Sequence[str]) -> tuple[str, ...]:
    """``evaluated`` (the 11), ``all`` (the 17) or an explicit list of MAESTRO classes."""
    if classes == "evaluated":
        return EVALUATED
    if classes == "all":
        return CLASSES
    if isinstance(classes, str):
        raise SedContractError(f"MAESTRO classes are 'evaluated', 'all' or a list, got "
                               f"{classes!r}")
    unknown = [c for c in classes if c not in CLASSES]
    if unknown or not classes:
        raise SedContractError(f"unknown MAESTRO class(es) {unknown or list(classes)}; the "
                               f"classes are {', '.join(map(repr, CLASSES))}")
    return tuple(classes)


@dataclass(frozen=True)
class MaestroFile:
    scene: str
    file: str
    annotation: Path
    audio: Path | None


def index_corpus(root: str | Path) -> list[MaestroFile]:
    """Every annotated file under ``root`` with its audio (None when the audio archive is not
    there), sorted by file id; a file annotated twice is an error."""
    root = Path(root)
    if not root.is_dir():
        raise SedContractError(f"{root} is not a folder; expected {LAYOUT}")
    audio: dict[str, Path] = {}
    for wav in sorted(root.rglob("*.wav")):
        if wav.parent.name in SCENES:
            audio.setdefault(wav.stem, regular_file(wav))
    files: dict[str, MaestroFile] = {}
    for folder in sorted(root.rglob("soft_labels_*")):
        scene = folder.name.removeprefix("soft_labels_")
        if not folder.is_dir() or scene not in SCENES:
            continue
        for txt in sorted(folder.glob("*.txt")):
            regular_file(txt)  # a pipe named *.txt would block the reader
            if txt.stem in files:
                raise SedContractError(f"{txt} and {files[txt.stem].annotation} both annotate "
                                       f"{txt.stem!r}")
            files[txt.stem] = MaestroFile(scene, txt.stem, txt, audio.get(txt.stem))
    if not files:
        raise SedContractError(f"no MAESTRO Real annotations under {root}; expected {LAYOUT} "
                               "(scripts/fetch_maestro_real.py downloads them)")
    return [files[k] for k in sorted(files)]


def audio_duration(path: Path) -> float:
    """A file's duration from its header (checked: :func:`~sedcontract.data.audio.audio_info`)."""
    return audio_info(path).seconds


@dataclass(frozen=True)
class MaestroCorpus:
    """The files, their soft labels, hard reference and durations (from the audio, else a
    durations tsv, else the last annotated segment's end — counted in ``duration_source``)."""

    files: list[MaestroFile]
    soft: SoftLabels
    reference: EventList
    durations: dict[str, float]
    duration_source: str


def read_corpus(root: str | Path | None = None, *, soft: str | Path | None = None,
                classes: str | Sequence[str] = "evaluated",
                durations: str | Path | None = None) -> MaestroCorpus:
    """Read the corpus tree at ``root`` (or a soft-label tsv ``soft``) into soft labels of
    ``classes`` and hard reference events."""
    chosen = class_list(classes)
    if (root is None) == (soft is None):
        raise SedContractError("give the MAESTRO Real folder (--root) or a soft-label tsv "
                               "(--soft), not both")
    files: list[MaestroFile] = []
    if root is not None:
        files = index_corpus(root)
        labels = collect((row for f in files for row in annotation_rows(f.annotation, f.file)),
                         chosen, CLASSES)
    else:
        labels = read_soft_tsv(soft, chosen, CLASSES)
    given = read_durations(durations) if durations is not None else {}
    by_file = {f.file: f for f in files}
    lengths: dict[str, float] = {}
    sources: Counter[str] = Counter()
    # an annotation file without rows is a file without events
    for clip in dict.fromkeys([*labels.clips, *by_file]):
        item, audio = labels.clips.get(clip), by_file[clip].audio if clip in by_file else None
        if audio is not None:
            lengths[clip], source = audio_duration(audio), "audio"
        elif clip in given:
            lengths[clip], source = given[clip], "durations file"
        elif item is not None:
            lengths[clip], source = item.end, "last annotated segment"
        else:
            raise SedContractError(f"{by_file[clip].annotation} has no rows and the file has no "
                                   "audio or listed duration: its length is unknown")
        sources[source] += 1
        if item is not None and lengths[clip] + SEGMENT < item.end:
            raise TraceFormatError(f"annotated up to {item.end:g} s but the file lasts "
                                   f"{lengths[clip]:g} s (from its {source})", path=item.path)
    reference = with_clips(labels.hard(durations=lengths), lengths)
    source = ", ".join(f"{n} from the {name}" for name, n in sorted(sources.items()))
    return MaestroCorpus(files, labels, reference, lengths, source)


def folds(files: Sequence[MaestroFile], count: int = FOLDS) -> dict[str, int]:
    """A fold per file: files ordered by scene, then id, are dealt to the folds in turn, so
    each scene's files spread over the folds."""
    ordered = sorted(files, key=lambda f: (SCENES.index(f.scene), f.file))
    return {item.file: k % count for k, item in enumerate(ordered)}


FILES = {"reference": "maestro_real.tsv", "durations": "maestro_real_durations.tsv",
         "soft": "maestro_real_soft.tsv"}


def corpus_files(corpus: MaestroCorpus) -> dict[str, str]:
    """The hard reference, durations and soft labels as DCASE tsv texts, by file name
    (``FILES``)."""
    return {FILES["reference"]: events_tsv(corpus.reference),
            FILES["durations"]: durations_tsv(corpus.durations),
            FILES["soft"]: soft_tsv(corpus.soft)}


def write_corpus_files(folder: str | Path, corpus: MaestroCorpus, *,
                       inputs: Sequence[str | Path | None] = ()) -> list[Path]:
    """Write :func:`corpus_files` into ``folder``, all or none: if any is one of ``inputs``
    nothing is written."""
    texts = {Path(folder) / name: text for name, text in corpus_files(corpus).items()}
    with Outputs(reads=inputs, writes=list(texts), creates=[folder]) as out:
        for path, text in texts.items():
            out.write(path, text)
    return list(texts)
