"""DESIGN.md's worked example, as event lists and as DCASE files."""

from __future__ import annotations


# -- DESIGN.md's worked example -----------------------------------------------------------------
def worked_example():
    """Reference and prediction of DESIGN.md's worked example (one 4 s clip 'c')."""
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
