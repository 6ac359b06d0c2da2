"""Each committed page of the protocol (docs/results) is exactly what the library renders of
the CSV files beside it: no number on it was edited by hand; and what a round writes is what
it reads back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from sedcontract.experiments import losses_files, tradeoff_files
from sedcontract.experiments.tables import read_json
from tests.helpers.paths import REPO

RESULTS = REPO / "docs" / "results"
PAGES = [(losses_files, losses_files.HELDOUT_STEM), (losses_files, losses_files.DEVELOPMENT_STEM),
         (tradeoff_files, tradeoff_files.HELDOUT_STEM),
         (tradeoff_files, tradeoff_files.DEVELOPMENT_STEM)]


@pytest.mark.parametrize(("files", "stem"), PAGES, ids=[stem for _, stem in PAGES])
def test_the_committed_pages_are_their_rows_rendered(tmp_path, files, stem):
    paths_of: Callable[[Path, str], dict[str, Path]] = files.paths_of
    for path in paths_of(RESULTS, stem).values():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    page = tmp_path / f"{stem}.md"
    page.unlink()
    printed = files.render_to(tmp_path, stem)
    assert page.read_bytes() == (RESULTS / f"{stem}.md").read_bytes()
    assert printed == page.read_text()


@pytest.mark.parametrize(("files", "stem"), PAGES, ids=[stem for _, stem in PAGES])
def test_writing_the_committed_rows_again_gives_the_committed_files(tmp_path, files, stem):
    """The tables a round writes, read back and written again, are the same bytes: the CSV
    files, the run's record and the page rendered from their text."""
    committed = files.paths_of(RESULTS, stem)
    meta = read_json(committed["meta"], "the run's record")
    page = files.write_all(tmp_path, stem, files.read_all_tables(RESULTS, stem), meta)
    for path in committed.values():
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
    assert page == committed["page"].read_text()
