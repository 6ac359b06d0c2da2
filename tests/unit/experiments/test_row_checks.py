"""The protocol's source rows are checked before a page is made of them: each mistake below
once rendered a page (a score of 1.284, an interval upside down, a mean over four seeds read
as five, a NaN PSDS1 left out) or ended in a traceback (text in a number column, a system the
round does not know: KeyError 'offset'); now each is one line naming the file, row and
column, and nothing is written."""

from __future__ import annotations

import csv

import pytest

from sedcontract.errors import ProtocolError
from sedcontract.experiments import losses_files, tradeoff_files
from tests.helpers.paths import REPO

RESULTS = REPO / "docs" / "results"


def committed(tmp_path, files, stem):
    """The committed source files of a page, copied; the page itself left out."""
    for key, path in files.paths_of(RESULTS, stem).items():
        if key != "page":
            (tmp_path / path.name).write_bytes(path.read_bytes())
    return files.paths_of(tmp_path, stem)


def edit(path, row: int, changes: dict[str, str] | None = None, drop: bool = False) -> None:
    """Change cells of data row ``row`` (from 1), or drop the row."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if drop:
        del rows[row - 1]
    else:
        rows[row - 1].update(changes or {})
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


@pytest.mark.parametrize(("key", "changes", "message"), [
    ("rows", {"satisfied": "5036"}, r"\.csv, row 2: satisfied 5036 exceeds obligations 3933"),
    ("rows", {"satisfied": "12x"}, r"\.csv, row 2, column 'satisfied': '12x' is not a whole "
                                   r"number >= 0"),
    ("rows", {"obligations": "-3"}, r"column 'obligations': '-3' is not a whole number"),
    ("rows", {"system": "mystery"}, r"column 'system': no system 'mystery' in this round"),
    ("psds", {"psds1": "nan"}, r"_psds\.csv, row 2, column 'psds1': 'nan' is not a finite "
                               r"number"),
    ("post", {"threshold": "high"}, r"_post\.csv, row 2, column 'threshold': 'high' is not a "
                                    r"finite number"),
    ("intervals", {"lo": "0.5", "hi": "0.1"}, r"_intervals\.csv, row 2: the interval's low "
                                              r"end 0\.5 is above its high end 0\.1"),
    ("intervals", {"benchmark": "two"}, r"column 'benchmark': 'two' is not a whole number >= 0 "
                                        r"or 'pooled'"),
    ("intervals", {"control": "nobody"}, r"column 'control': no system 'nobody'"),
    ("intervals", {"defined": "20000"}, r"defined 20000 exceeds resamples 10000"),
])
def test_a_bad_row_is_named_and_no_page_is_written(tmp_path, key, changes, message):
    paths = committed(tmp_path, losses_files, losses_files.HELDOUT_STEM)
    edit(paths[key], 1, changes)
    with pytest.raises(ProtocolError, match=message):
        losses_files.render_to(tmp_path, losses_files.HELDOUT_STEM)
    assert not paths["page"].exists()


def test_a_missing_seed_is_named_not_averaged_away(tmp_path):
    paths = committed(tmp_path, losses_files, losses_files.HELDOUT_STEM)
    edit(paths["psds"], 1, drop=True)  # benchmark 2, bce_only, seed 0
    with pytest.raises(ProtocolError, match=r"_psds\.csv: benchmark 2, system bce_only has no "
                                            r"row of seed 0, which the benchmark's other "
                                            r"systems have"):
        losses_files.render_to(tmp_path, losses_files.HELDOUT_STEM)


def test_round_two_checks_its_own_systems_and_numbers(tmp_path):
    stem = tradeoff_files.HELDOUT_STEM
    paths = committed(tmp_path, tradeoff_files, stem)
    edit(paths["runs"], 1, {"value": "inf"})
    with pytest.raises(ProtocolError, match=r"_runs\.csv, row 2, column 'value': 'inf' is not "
                                            r"a finite number"):
        tradeoff_files.render_to(tmp_path, stem)
    paths = committed(tmp_path, tradeoff_files, stem)
    edit(paths["systems"], 1, {"system": "rise_w1"})  # a round 1 arm: not round 2's
    with pytest.raises(ProtocolError, match="no system 'rise_w1' in this round"):
        tradeoff_files.render_to(tmp_path, stem)
    paths = committed(tmp_path, tradeoff_files, stem)
    assert tradeoff_files.render_to(tmp_path, stem) == (RESULTS / f"{stem}.md").read_text()
