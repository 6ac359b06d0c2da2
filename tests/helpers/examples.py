"""The worked example of docs/architecture.md, as event lists and as DCASE files."""

from __future__ import annotations

import numpy as np

from sedcontract.data import pathology_set, write_pathology_set
from sedcontract.traces import EventList


# -- the worked example (docs/architecture.md) ---------------------------------------------
def worked_example():
    """Reference and prediction of the worked example (one 4 s clip 'c')."""
    from sedcontract.traces import EventList

    ref = EventList.from_rows([("c", 0.5, 1.5, "speech"), ("c", 2.0, 2.6, "tone")])
    pred = EventList.from_rows([("c", 0.6, 1.0, "speech"), ("c", 1.1, 1.8, "speech"),
                                ("c", 2.0, 2.6, "speech"), ("c", 3.2, 3.4, "tone")])
    return ref, pred


def write_worked_example(folder) -> list[str]:
    """Write the worked example as DCASE files; returns ``--ref`` and ``--durations`` options
    (the prediction is ``folder / 'pred.tsv'``)."""
    from sedcontract.traces import write_durations, write_events

    ref, pred = worked_example()
    write_events(folder / "ref.tsv", ref)
    write_events(folder / "pred.tsv", pred)
    write_durations(folder / "dur.tsv", {"c": 4.0})
    return [f"--ref={folder / 'ref.tsv'}", f"--durations={folder / 'dur.tsv'}"]


def random_reference(seed: int, clips: int = 5) -> EventList:
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(clips):
        for label in ("speech", "tone", "burst"):
            t = rng.uniform(0.3, 1.0)
            while t < 8.0:
                length = rng.uniform(0.3, 1.2)
                rows.append((f"clip{c}", round(t, 3), round(t + length, 3), label))
                t += length + rng.uniform(0.5, 2.0)
    return EventList.from_rows(rows)


DURATION = 6.0


def reference(clips: int = 6) -> EventList:
    rows = []
    for c in range(clips):
        for k, label in enumerate(("speech", "tone")):
            for start in (0.4 + 0.3 * k, 2.6 + 0.3 * k, 4.4):
                rows.append((f"r{c}", start + 0.05 * c, start + 0.05 * c + 0.9 - 0.4 * k,
                             label))
    return EventList.from_rows(rows)


def calibration(tmp_path, pathologies):
    ref = reference()
    data = pathology_set(ref, dict.fromkeys(ref.clips, DURATION), seed=0,
                         pathologies=pathologies)
    write_pathology_set(tmp_path / "cal", data)
    return tmp_path / "cal", data
