"""The real DCASE files of ``tests/data/real_dcase`` (DESED validation, the DCASE baseline's
own outputs) and the frame scores its operating points imply, shared by the tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sedcontract.traces import read_durations

DATA = Path(__file__).parent / "data" / "real_dcase"
REF, DURATIONS = DATA / "validation.tsv", DATA / "validation_durations.tsv"
PRED = DATA / "teacher" / "predictions0.5.csv"
CLASSES = ("Alarm_bell_ringing", "Blender", "Cat", "Dishes", "Dog", "Electric_shaver_toothbrush",
           "Frying", "Running_water", "Speech", "Vacuum_cleaner")
HOP, FRAMES = 0.064, 156  # the baseline's CRNN output: 156 frames of 64 ms (9.984 s)


def implied_scores(points: Path) -> dict[str, np.ndarray]:
    """The baseline's frame scores as its 50 operating points imply them: on its 64 ms grid, a
    frame's score for a class is the highest threshold at which the frame lies in a detection
    (0 elsewhere); ``{clip: [156 frames, classes]}`` for every clip of the durations file."""
    import pandas as pd

    clips = {c: i for i, c in enumerate(read_durations(DURATIONS))}
    column = {c: k for k, c in enumerate(CLASSES)}
    scores = np.zeros((len(clips), FRAMES, len(CLASSES)))
    for path in sorted(points.glob("predictions_th_*.tsv")):
        threshold = float(path.stem.rsplit("_", 1)[1])
        table = pd.read_csv(path, sep="\t")
        for label, on, off, name in zip(table.event_label, table.onset, table.offset,
                                        table.filename, strict=True):
            cell = scores[clips[name.removesuffix(".wav")], round(on / HOP):round(off / HOP),
                          column[label]]
            np.maximum(cell, threshold, out=cell)
    return dict(zip(clips, scores, strict=True))


def write_implied_scores(folder: Path, points: Path | None = None) -> Path:
    """The implied scores (:func:`implied_scores`) as a folder of sed_scores_eval score files,
    one per clip, 156 frames each (so frames run past clips shorter than 9.984 s, as the
    baseline writes them); ``points``: the extracted operating points, else read from the
    repository's archive. ``folder`` must not exist yet."""
    import tarfile
    import tempfile

    folder.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        if points is None:
            with tarfile.open(DATA / "teacher" / "operating_points.tar.xz") as opened:
                opened.extractall(tmp, filter="data")
            points = Path(tmp) / "teacher"
        for clip, table in implied_scores(points).items():
            rows = [f"{k * HOP:.3f}\t{(k + 1) * HOP:.3f}\t" + "\t".join(f"{v:g}" for v in row)
                    for k, row in enumerate(table)]
            (folder / f"{clip}.tsv").write_text("\t".join(("onset", "offset", *CLASSES))
                                                + "\n" + "\n".join(rows) + "\n")
    return folder
