"""The library computes what ``audit`` and ``scores`` compute: a request of paths and settings
(``sedcontract.analysis.audit_request``) renders, in every format, the bytes the command
writes; the curves' request (shards, hours, bootstrap) is reachable from Python and equals the
curves' summary made by hand; the curves take the policy's decision."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sedcontract.analysis.audit_request import AuditRequest, ScoresRequest
from sedcontract.analysis.audited import Audited
from sedcontract.analysis.curve_request import CurvesRequest
from sedcontract.analysis.curve_summaries import curve_summary, summary_dict
from sedcontract.blocks import clip_range
from sedcontract.cli import main
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, ScoreSettings
from sedcontract.guard.curve_data import curves_of_data
from sedcontract.guard.curves import guard_curves, join_curves
from sedcontract.scores.psds.settings import PRESETS
from sedcontract.traces import write_durations, write_events
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.score_files import ScoreFolder
from tests.helpers.score_tables import corpus, write_tables


@pytest.fixture()
def files(tmp_path):
    """A generated corpus written as files (reference, durations, two systems' score folders)
    with its objects."""
    ref, tables, durations, _ = corpus(5, clips=5, n_classes=3, frames=40)
    _, other, _, _ = corpus(6, clips=5, n_classes=3, frames=40)
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "durations.tsv", durations)
    mine = write_tables(tmp_path / "a", tables)
    theirs = write_tables(tmp_path / "b", other)  # the same clips, other scores
    paths = {"ref": str(tmp_path / "ref.tsv"), "durations": str(tmp_path / "durations.tsv"),
             "pred_scores": str(mine), "compare_scores": str(theirs)}
    return paths, ref, tables, durations


def _command(paths, *extra):
    return ["--ref", paths["ref"], "--durations", paths["durations"], "--pred-scores",
            paths["pred_scores"], *extra]


def _policy(threshold: float, scores: bool = True) -> AuditPolicy:
    return AuditPolicy(decision=DecisionPolicy(threshold=threshold),
                       scores=ScoreSettings() if scores else None)


def test_an_audit_request_renders_the_bytes_the_command_writes(files, capsys):
    paths, *_ = files
    common = {k: paths[k] for k in ("ref", "durations", "pred_scores")}
    cases = [
        (AuditRequest(**common, policy=_policy(0.4), with_scores=True, bootstrap=30,
                      compare_scores=paths["compare_scores"]),
         ["--with-scores", "--threshold", "0.4", "--bootstrap", "30", "--compare-scores",
          paths["compare_scores"]], ("md", "json")),
        (AuditRequest(**common, policy=_policy(0.6, scores=False), mode="typed",
                      curves=CurvesRequest(targets=(("missed", 0.5),), max_rate=40.0)),
         ["--threshold", "0.6", "--mode", "typed", "--curves", "--curves-targets",
          "missed=0.5", "--curves-max-rate", "40"], ("md", "json")),
        (AuditRequest(**common, policy=_policy(0.5), with_scores=True, bootstrap=20,
                      system="s", intervals=False, curves=CurvesRequest()),
         ["--with-scores", "--bootstrap", "20", "--system", "s", "--curves"], ("csv",)),
    ]
    for request, options, formats in cases:
        done = request.compute()
        for fmt in formats:
            assert main(["audit", *_command(paths, *options), "--format", fmt]) == 0
            assert done.render(fmt) == capsys.readouterr().out, (options, fmt)


def test_a_scores_request_renders_the_bytes_the_command_writes(files, capsys):
    paths, *_ = files
    request = ScoresRequest(paths["ref"], _policy(0.5), pred_scores=paths["pred_scores"],
                            durations=paths["durations"], bootstrap=25,
                            psds={"psds1": PRESETS["psds1"]})
    done = request.compute()
    for fmt in ("md", "json"):
        assert main(["scores", *_command(paths, "--bootstrap", "25", "--psds", "psds1"),
                     "--format", fmt]) == 0
        assert done.render(fmt) == capsys.readouterr().out
    with pytest.raises(SedContractError, match="renders as md, json, not 'csv'"):
        done.render("csv")


def test_the_curves_request_is_the_summary_of_the_curves_and_its_shards_join(files):
    paths, ref, tables, durations = files
    policy = AuditPolicy(decision=DecisionPolicy(threshold=0.5, median_filter=0.12))
    folder = ScoreFolder.open(paths["pred_scores"], ref.clips)
    request = CurvesRequest(max_rate=60.0, targets=(("missed", 0.5), ("false", 0.5)))
    got = request.compute(ref, folder, durations, policy)
    hours = math.fsum(durations[c] for c in ref.clips) / 3600
    want = curve_summary(guard_curves(ref, tables, durations, decision=policy.decision), hours,
                         60.0, {"missed": 0.5, "false": 0.5}, policy.decision)
    assert summary_dict(got) == summary_dict(want)
    from_files = request.compute(paths["ref"], paths["pred_scores"], paths["durations"], policy)
    assert summary_dict(from_files) == summary_dict(got)
    drawn = CurvesRequest(max_rate=60.0).compute(ref, folder, durations, policy, resamples=30,
                                                 seed=3)
    assert drawn["areas"] == got["areas"] and drawn["seed"] == 3
    assert set(drawn["intervals"]) == set(got["areas"])
    sections = [CurvesRequest().compute(ref, folder, durations, policy, shard=(i, 2))
                for i in range(2)]
    assert sum(len(s["durations"]) for s in sections) == len(ref.clips)
    assert sections[0]["settings"]["decision"] == policy.decision.as_dict()
    joined = join_curves([curves_of_data(s["data"], "shard") for s in sections])
    whole = guard_curves(ref, tables, durations, policy)
    for name in whole.typed:
        assert joined.union[name].base == whole.union[name].base
        assert np.array_equal(joined.union[name].values, whole.union[name].values)


def test_the_curves_take_the_policys_decision_unless_one_is_given(files):
    _, ref, tables, durations = files
    filtered = DecisionPolicy(median_filter=0.12)
    from_policy = guard_curves(ref, tables, durations, AuditPolicy(decision=filtered))
    given = guard_curves(ref, tables, durations, decision=filtered)
    plain = guard_curves(ref, tables, durations)
    for name in plain.typed:
        assert np.array_equal(from_policy.union[name].values, given.union[name].values)
    assert any(not np.array_equal(plain.union[n].values, given.union[n].values)
               for n in plain.typed)  # the filter changes the curves: the test can fail


def test_a_request_refuses_contradictions_by_its_fields_names_before_reading(files):
    paths, *_ = files
    refused = [
        (AuditRequest(paths["ref"], durations=paths["durations"]),
         "needs one system output: give pred or pred_scores"),
        (AuditRequest(paths["ref"], pred_scores=paths["pred_scores"], curves=CurvesRequest()),
         "curves follows the guard vector .* give pred_scores and durations"),
        (AuditRequest(paths["ref"], pred="a.tsv", pred_scores=paths["pred_scores"]),
         "give one of pred .* or pred_scores"),
        (ScoresRequest(paths["ref"], pred="a.tsv", clips="durations"),
         "clips durations needs durations"),
        (ScoresRequest(paths["ref"], pred_points=("a.tsv",)), "add durations"),
        (AuditRequest(paths["ref"], pred_scores=paths["pred_scores"],
                      durations=paths["durations"], compare_scores=paths["compare_scores"]),
         "give pred_scores \\(with with_scores in audit\\) and durations"),
        (AuditRequest(paths["ref"], pred_scores=paths["pred_scores"],
                      durations=paths["durations"], curves=CurvesRequest(max_rate=-1.0)),
         "max_rate must be a positive number"),
        (AuditRequest(paths["ref"], pred_scores=paths["pred_scores"],
                      durations=paths["durations"],
                      curves=CurvesRequest(targets=(("duration", 0.5),))),
         "no curve of 'duration'"),
    ]
    for request, message in refused:
        with pytest.raises(SedContractError, match=message):
            request.compute()
    with pytest.raises(SedContractError, match="clip durations"):
        CurvesRequest().compute(paths["ref"], paths["pred_scores"], None)


def test_with_scores_gives_the_standard_scores_and_the_curves_take_the_audits_draws(files):
    paths, *_ = files
    common = {"pred_scores": paths["pred_scores"], "durations": paths["durations"]}
    assert AuditRequest(paths["ref"], **common).compute().report.scores is None
    done = AuditRequest(paths["ref"], **common, with_scores=True, bootstrap=20,
                        curves=CurvesRequest()).compute()
    assert set(done.report.scores) >= {"event", "segment"} and done.report.psds is not None
    assert done.curves["seed"] == 0 and set(done.curves["intervals"]) == set(done.curves["areas"])
    shard = AuditRequest(paths["ref"], **common, shard=(1, 2), curves=CurvesRequest()).compute()
    first, stop = clip_range(5, 1, 2)  # the audit's own block of the clips
    assert json.loads(shard.render("json"))["shard"]["curves"]["durations"] == \
        shard.curves["durations"] and len(shard.curves["durations"]) == stop - first


def test_each_result_names_its_kind_and_refuses_what_it_cannot_render():
    assert Audited(None, {"note": "x"}).kind == "psds"
    assert Audited(None, {"note": "x"}).render("md") == "PSDS: not computed (x)\n"
    with pytest.raises(SedContractError, match="renders as md, json"):
        Audited(None, {"note": "x"}).render("csv")
    with pytest.raises(SedContractError, match="a report, or PSDS"):
        Audited(None)
    with pytest.raises(SedContractError, match="both or neither"):
        Audited(None, {"note": "x"}, corpus={"clips": []})


def test_a_shard_refuses_what_needs_the_whole_corpus_instead_of_dropping_it(files, capsys):
    """``--shard … --bootstrap`` once wrote a shard whose merge silently had no intervals; the
    same for ``--compare`` and ``--compare-scores``."""
    paths, *_ = files
    base = ["audit", *_command(paths), "--shard", "0/2", "--format", "json"]
    for extra, named in ((["--bootstrap", "50"], "--bootstrap"),
                         (["--compare", paths["ref"]], "--compare"),
                         (["--with-scores", "--compare-scores", paths["compare_scores"]],
                          "--compare-scores")):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert f"{named} resample or pair the whole corpus, which a shard (--shard) does not " \
               "hold: audit the corpus without --shard (--jobs shares" in err, err
    with pytest.raises(SedContractError, match="bootstrap resample or pair the whole corpus"):
        AuditRequest(paths["ref"], pred_scores=paths["pred_scores"], shard=(0, 2),
                     bootstrap=10).compute()
    assert main([*base]) == 0  # the shard alone is written
