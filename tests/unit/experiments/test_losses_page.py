"""Round 1's pages (:mod:`sedcontract.experiments.losses_files`): the held-out table is
rendered from its source rows alone, the protocol's goal is read from the intervals, not typed
in, and the development page ranks the candidates by the pooled tuned difference."""

from __future__ import annotations

import pytest

from sedcontract.errors import ProtocolError
from sedcontract.experiments import losses_files
from tests.helpers.protocol_tables import development_tables, heldout_tables


def test_the_table_comes_from_the_rows_and_the_goal_from_the_intervals(tmp_path):
    heldout_tables(tmp_path, (0.03, 0.02, 0.04))
    printed = losses_files.render_to(tmp_path, losses_files.HELDOUT_STEM)
    text = (tmp_path / "contract_losses.md").read_text()
    assert printed == text  # what it returns is what it wrote
    # per seed: the mean of the six non-vacuous coordinates (silence is vacuous, left out)
    assert "| 2 | bce_only | 0.810 ± 0.014 | 0.810 ± 0.014 |" in text
    assert "| 2 | contract + tuned post | 0.860 ± 0.014 |" in text
    assert "| 2 | contract | 0.840 ± 0.014 | 0.840 ± 0.014 | 0.430 ± 0.000 |" \
        in text  # event F1, segment F1 (2·83 and 2·85 of 200) and PSDS1
    assert "| **pooled** | contract + tuned post | bce_only + tuned post | " \
           "+0.030 [+0.020, +0.040] **↑** |" in text
    assert "| 2 | contract | 0 | 0.12 | 0.4 | — | 0.900 |" in text
    assert "— met." in text and "Without post-processing, beats BCE + tuned post on onset " \
        "+0.030 [+0.020, +0.040] **↑**" in text and "60 minutes" in text
    # onset no better than post-processing's, beyond doubt: the third goal is not met
    heldout_tables(tmp_path, (-0.01, -0.03, 0.01))
    losses_files.render_to(tmp_path, losses_files.HELDOUT_STEM)
    text = (tmp_path / "contract_losses.md").read_text()
    assert "onset -0.010 [-0.030, +0.010] and offset +0.030 [+0.020, +0.040] **↑**: not met" \
        in text


def test_render_names_a_missing_source_file(tmp_path):
    heldout_tables(tmp_path, (0.03, 0.02, 0.04))
    (tmp_path / "contract_losses_psds.csv").unlink()
    with pytest.raises(ProtocolError, match=r"contract_losses_psds\.csv does not exist \(the psds "
                                         r"of the table\)"):
        losses_files.render_to(tmp_path, losses_files.HELDOUT_STEM)
    assert not (tmp_path / "contract_losses.md").exists()


def test_render_names_an_empty_table_and_an_incomplete_run_record(tmp_path):
    """A page needs rows and intervals, and the run's record of its command and split."""
    heldout_tables(tmp_path, (0.03, 0.02, 0.04))
    (tmp_path / "contract_losses_run.json").unlink()
    with pytest.raises(ProtocolError, match=r"contract_losses_run\.json: the run's record \(its "
                                         r"command and split\) is missing or incomplete"):
        losses_files.render_to(tmp_path, losses_files.HELDOUT_STEM)
    (tmp_path / "contract_losses_intervals.csv").write_text(
        ",".join(losses_files.COLUMNS["intervals"]) + "\n")
    with pytest.raises(ProtocolError, match=r"contract_losses_intervals\.csv has no rows"):
        losses_files.render_to(tmp_path, losses_files.HELDOUT_STEM)
    assert not (tmp_path / "contract_losses.md").exists()


def test_the_development_page_ranks_the_candidates_by_the_pooled_tuned_difference(tmp_path):
    """The choice on development data is read from the pooled validation intervals (tuned
    against tuned), not typed in, and the page says it makes no claim."""
    stem = development_tables(tmp_path)
    losses_files.render_to(tmp_path, losses_files.DEVELOPMENT_STEM)
    text = (tmp_path / f"{stem}.md").read_text()
    assert "on the development benchmarks (validation splits)" in text
    assert "it makes no claim" in text and "The goal" not in text
    assert "Ranked: `rise_w1` +0.002 [-0.010, +0.020]; `rise_boundary` -0.001 [-0.010, +0.020]. " \
           "Chosen: `rise_w1` (`python scripts/contract_losses.py lock rise_w1`)." in text
