"""A generated corpus with an informative detector: reference events at random, and frame
scores that rise over each event (its edges jittered, its level varying per event) above a
noise floor, rounded to steps of 0.02 as DESED_task's grid reads them. Certification needs
scores whose risks move with the threshold, which uniform noise does not give."""

from __future__ import annotations

import numpy as np

from sedcontract.traces import EventList
from sedcontract.traces.score_files import ScoreTable


def detector_corpus(seed: int, clips: int = 400, classes: int = 2, frames: int = 100,
                    hop: float = 0.1):
    """``(ref, tables, durations, classes)``: about 60 % of the clips hold 1–3 events of a
    class; each event's scores sit at a level drawn from [0.3, 1], its edges moved by up to
    3 frames, over uniform noise below 0.5."""
    rng = np.random.default_rng(seed)
    names = tuple(f"c{k}" for k in range(classes))
    span = round(frames * hop, 6)
    rows, tables = [], {}
    for i in range(clips):
        clip = f"clip{i:04d}"
        scores = rng.uniform(0, 0.5, (frames, classes)) ** 2
        for k, name in enumerate(names):
            if rng.uniform() > 0.6:
                continue
            for start in np.sort(rng.choice(np.arange(0, frames - 12, 12),
                                            size=int(rng.integers(1, 4)), replace=False)):
                length = int(rng.integers(3, 12))
                rows.append((clip, round(start * hop, 6), round((start + length) * hop, 6),
                             name))
                a = int(np.clip(start + rng.integers(-3, 4), 0, frames - 1))
                b = int(np.clip(start + length + rng.integers(-3, 4), a + 1, frames))
                scores[a:b, k] = np.maximum(scores[a:b, k], rng.uniform(0.3, 1.0)
                                            - rng.uniform(0, 0.15, b - a))
        scores = np.round(np.clip(scores, 0, 1) * 50) / 50
        f = np.arange(frames)
        tables[clip] = ScoreTable(np.round(f * hop, 6), np.round((f + 1) * hop, 6), names,
                                  scores, f + 2)
    ref = EventList.from_rows(rows, clips=tuple(tables))
    return ref, tables, dict.fromkeys(tables, span), names
