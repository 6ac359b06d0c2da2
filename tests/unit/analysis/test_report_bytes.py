"""The JSON report of ``sedcontract audit`` is pinned byte for byte on the shipped example and
on a random case (files in ``tests/data``): refactoring how the policy travels must not change
a single number or key. Regenerate a pin only for a deliberate change of the report:
``python -m tests.unit.analysis.test_report_bytes``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from sedcontract.cli import EXAMPLES, main
from sedcontract.traces import EventList, write_durations, write_events
from tests.helpers.paths import TEST_DATA

PINS = TEST_DATA


def random_case(folder: Path) -> list[str]:
    """A seeded reference/prediction pair (5 clips, 3 classes, jittered, split, merged and
    false events), written as DCASE files; returns the audit options that read them."""
    rng = np.random.default_rng(20261130)
    ref_rows, pred_rows, durations = [], [], {}
    for c in range(5):
        clip = f"clip{c}"
        durations[clip] = float(rng.choice([6.0, 8.0, 10.0]))
        for label in ("speech", "tone", "dog bark"):
            t = float(rng.uniform(0.1, 1.0))
            while t < durations[clip] - 1.2:
                length = float(rng.uniform(0.2, 1.0))
                ref_rows.append((clip, round(t, 3), round(t + length, 3), label))
                on = max(0.0, t + float(rng.normal(0, 0.15)))
                off = min(durations[clip], max(on + 0.05, t + length + float(rng.normal(0, 0.2))))
                if rng.random() < 0.2:  # fragmented
                    middle = (on + off) / 2
                    pred_rows += [(clip, round(on, 3), round(middle - 0.05, 3), label),
                                  (clip, round(middle + 0.05, 3), round(off, 3), label)]
                elif rng.random() > 0.1:  # else missed
                    pred_rows.append((clip, round(on, 3), round(off, 3), label))
                t += length + float(rng.uniform(0.3, 1.5))
        false_on = float(rng.uniform(0, durations[clip] - 0.5))
        pred_rows.append((clip, round(false_on, 3), round(false_on + 0.3, 3), "tone"))
    write_events(folder / "ref.tsv", EventList.from_rows(ref_rows))
    write_events(folder / "pred.tsv", EventList.from_rows(pred_rows, clips=tuple(durations)))
    write_durations(folder / "dur.tsv", durations)
    return [f"--ref={folder / 'ref.tsv'}", f"--pred={folder / 'pred.tsv'}",
            f"--durations={folder / 'dur.tsv'}"]


def demo_case(folder: Path) -> list[str]:
    return [f"--ref={EXAMPLES / 'demo_ref.tsv'}", f"--pred={EXAMPLES / 'demo_pred.tsv'}",
            f"--durations={EXAMPLES / 'demo_durations.tsv'}"]


CASES = {
    "demo_report.json": (demo_case, []),
    "random_report.json": (random_case, ["--with-scores", "--eps", "120ms", "--matching",
                                         "greedy", "--aggregation", "macro"]),
}


def report(name: str, folder: Path) -> bytes:
    make, options = CASES[name]
    out = folder / "report.json"
    assert main(["audit", *make(folder), *options, "--format", "json", "--out", str(out)]) == 0
    return out.read_bytes()


def test_the_json_report_is_pinned_byte_for_byte(tmp_path):
    for name in CASES:
        folder = tmp_path / name
        folder.mkdir()
        assert report(name, folder) == (PINS / name).read_bytes(), name


if __name__ == "__main__":  # rewrite the pins (a deliberate change of the report)
    import tempfile

    for name in CASES:
        with tempfile.TemporaryDirectory() as scratch:
            (PINS / name).write_bytes(report(name, Path(scratch)))
            print(f"wrote {PINS / name}", file=sys.stderr)
