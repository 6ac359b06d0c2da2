"""The output format of the DCASE 2024 Task 4 baseline, audited as an external track: score
files of 0.064 s frames (16 kHz, hop 256, pooled by 4; 156 frames a 10 s clip, never trimmed)
with 27 class columns, the DESED classes then the MAESTRO Real ones; MAESTRO files are scored
in 10 s chunks every 5 s. The shipped class maps (``examples/dcase2024_{desed,maestro}.tsv``)
name these columns."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sedcontract.data.desed import CLASSES as DESED_CLASSES
from sedcontract.data.maestro import CLASSES as MAESTRO_CLASSES

COLUMNS = (*DESED_CLASSES, *MAESTRO_CLASSES)
FRAME = 0.064      # seconds
FRAMES = 156       # per 10 s clip or chunk
CHUNK, CHUNK_HOP = 10.0, 5.0  # seconds: MAESTRO evaluation chunks
CLASS_MAPS = {track: Path(__file__).resolve().parents[1] / "examples" / f"dcase2024_{track}.tsv"
              for track in ("desed", "maestro")}


def implied_scores(points: Path, clips: Sequence[str],
                   classes: Sequence[str] = DESED_CLASSES) -> dict[str, np.ndarray]:
    """The baseline's frame scores as its operating-point tables imply them: on its 64 ms grid
    a frame's score for a class is the highest threshold at which the frame lies in a
    detection (0 elsewhere). ``points`` holds the ``predictions_th_<threshold>.tsv`` tables
    the baseline writes; ``{clip: [156 frames, classes]}`` for every clip of ``clips``."""
    index = {c: i for i, c in enumerate(clips)}
    column = {c: k for k, c in enumerate(classes)}
    scores = np.zeros((len(index), FRAMES, len(column)))
    for path in sorted(Path(points).glob("predictions_th_*.tsv")):
        threshold = float(path.stem.rsplit("_", 1)[1])
        with open(path, newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                on, off = float(row["onset"]), float(row["offset"])
                cell = scores[index[row["filename"].removesuffix(".wav")],
                              round(on / FRAME):round(off / FRAME), column[row["event_label"]]]
                np.maximum(cell, threshold, out=cell)
    return dict(zip(index, scores, strict=True))


def write_implied_scores(folder: Path, archive: Path, durations: Path,
                         classes: Sequence[str] = DESED_CLASSES) -> Path:
    """The implied scores (:func:`implied_scores`) of the operating points in ``archive`` (a
    ``.tar.xz`` of a ``teacher/`` folder) for the clips of ``durations``, written as a folder
    of sed_scores_eval score files, one per clip, 156 frames each (so frames run past clips
    shorter than 9.984 s, as the baseline writes them). ``folder`` must not exist yet."""
    import tarfile
    import tempfile

    from sedcontract.traces import read_durations

    folder = Path(folder)
    folder.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(archive) as opened:
            opened.extractall(tmp, filter="data")
        tables = implied_scores(Path(tmp) / "teacher", list(read_durations(durations)), classes)
    for clip, table in tables.items():
        rows = [f"{k * FRAME:.3f}\t{(k + 1) * FRAME:.3f}\t" + "\t".join(f"{v:g}" for v in row)
                for k, row in enumerate(table)]
        (folder / f"{clip}.tsv").write_text("\t".join(("onset", "offset", *classes))
                                            + "\n" + "\n".join(rows) + "\n")
    return folder
