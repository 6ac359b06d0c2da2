"""``sedcontract.audit`` is the audit function and no longer shadows a package: the package is
``sedcontract.guard``, and the old import paths still give the same objects, with a warning
that names the new path."""

import subprocess
import sys

import pytest

import sedcontract
from sedcontract.guard import curves, pipeline, report


def test_the_old_package_paths_give_the_new_objects_with_a_warning():
    with pytest.warns(FutureWarning, match=r"sedcontract\.audit\.curves is "
                                           r"sedcontract\.guard\.curves now"):
        from sedcontract.audit.curves import guard_curves
    assert guard_curves is curves.guard_curves
    with pytest.warns(FutureWarning, match=r"sedcontract\.audit\.GuardReport is "
                                           r"sedcontract\.guard\.GuardReport now"):
        from sedcontract.audit import GuardReport
    assert GuardReport is report.GuardReport
    with pytest.warns(FutureWarning, match="guard.report and sedcontract.guard.pipeline"):
        from sedcontract.audit.guard import ModeReport, empty_report
    assert ModeReport is report.ModeReport and empty_report is pipeline.empty_report
    with pytest.raises(ImportError):
        from sedcontract.audit import no_such_name  # noqa: F401
    with pytest.raises(ImportError):
        import sedcontract.audit.no_such_module  # noqa: F401


def test_modules_renamed_for_what_they_hold_keep_their_old_paths():
    from sedcontract.scores.psds import score_counts
    from sedcontract.traces import score_files

    with pytest.warns(FutureWarning, match=r"sedcontract\.traces\.scores is "
                                           r"sedcontract\.traces\.score_files now"):
        from sedcontract.traces.scores import ScoreTable
    assert ScoreTable is score_files.ScoreTable
    with pytest.warns(FutureWarning, match=r"score_tables is sedcontract\.scores\.psds\."
                                           r"of_scores now"):
        from sedcontract.scores.psds.score_tables import block_counts
    assert block_counts is score_counts.block_counts


def test_the_function_stays_the_function_whatever_is_imported():
    assert callable(sedcontract.audit) and sedcontract.audit is pipeline.audit
    code = ("import warnings; warnings.simplefilter('ignore'); import sedcontract; "
            "import sedcontract.audit.curves, sedcontract.guard.shards; "
            "from sedcontract.audit.render import to_json; "
            "print(sedcontract.audit is sedcontract.guard.pipeline.audit, "
            "sedcontract.guard.curves.guard_curves.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["True", "sedcontract.guard.curves"]
