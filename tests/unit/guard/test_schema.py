"""The layout of the JSON reports and CSV rows is pinned per ``SCHEMA_VERSION``
(``tests/data/schema``): a change of a key, a kind of value or a kind of row fails here until
the version is bumped, the new layout pinned (``python -m tests.helpers.schema_layout``, which
refuses to re-pin a version) and the change listed in ``docs/schema.md``; readers refuse rows
and shards of a version they do not know."""

from __future__ import annotations

import json
import re

import pytest

from sedcontract.analysis.source_rows import read_rows
from sedcontract.errors import TraceFormatError
from sedcontract.guard.rows import SCHEMA_VERSION, VERSION_SETTING
from tests.helpers.paths import REPO
from tests.helpers.schema_layout import layouts, pin_path


def test_every_output_keeps_the_layout_its_schema_version_pins():
    pinned = json.loads(pin_path().read_text())
    assert pinned["schema_version"] == SCHEMA_VERSION
    now = layouts()
    for name, layout in pinned["layouts"].items():
        added = sorted(set(now[name]) - set(layout))
        gone = sorted(set(layout) - set(now[name]))
        assert not added and not gone, (
            f"{name} changed layout under schema version {SCHEMA_VERSION} (added {added[:5]}, "
            f"gone {gone[:5]}): bump SCHEMA_VERSION in sedcontract.guard.rows, pin it with "
            "python -m tests.helpers.schema_layout and list the change in docs/schema.md")
    assert set(now) == set(pinned["layouts"])


def test_the_docs_list_each_version():
    text = (REPO / "docs" / "schema.md").read_text()
    versions = [int(v) for v in re.findall(r"^## Version (\d+)", text, flags=re.M)]
    assert versions == list(range(SCHEMA_VERSION, 0, -1))  # newest first, none skipped


def test_rows_say_their_version_and_rows_of_another_are_refused(tmp_path):
    """The CSV carries ``setting:schema_version`` for each system; rows of a version this
    reader does not know are refused by file, row and column, rows without the row (version
    1) are read."""
    from sedcontract.cli import main
    from sedcontract.traces import EventList, write_durations, write_events

    ref = EventList.from_rows([("a", 0.5, 1.5, "x"), ("b", 1.0, 2.0, "x")], clips=("a", "b"))
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "d.tsv", {"a": 4.0, "b": 4.0})
    rows = tmp_path / "rows.csv"
    assert main(["audit", "--ref", str(tmp_path / "ref.tsv"), "--pred", str(tmp_path / "ref.tsv"),
                 "--durations", str(tmp_path / "d.tsv"), "--format", "csv", "--out",
                 str(rows)]) == 0
    lines = rows.read_text().splitlines()
    version = [k for k, line in enumerate(lines) if f",{VERSION_SETTING}," in line]
    assert len(version) == 1 and lines[version[0]].endswith(f",{SCHEMA_VERSION}")
    assert read_rows([rows]).settings
    newer = tmp_path / "newer.csv"
    k = version[0]
    newer.write_text("\n".join([*lines[:k], lines[k].rsplit(",", 1)[0] + ",99",
                               *lines[k + 1:]]) + "\n")
    with pytest.raises(TraceFormatError, match=rf"newer.csv, row {k + 1}, column "
                                               r"'value': rows of schema version 99"):
        read_rows([newer])
    older = tmp_path / "older.csv"
    older.write_text("\n".join([*lines[:k], *lines[k + 1:]]) + "\n")
    assert len(read_rows([older])) == len(read_rows([rows]))
