"""Certified decisions: each unit's loss read off the curves agrees with the audit of each clip
at each threshold; the procedures reject what fixed-sequence, Holm and Bonferroni reject
(MAPIE's risk-control module as the oracle of the p-values and the procedures); a small
coverage experiment keeps the violation rate within δ and fails with the naive rule; and the
command certifies DESED's Speech for the speech gate, writing a decision file ``audit``
applies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sedcontract.analysis.certify import (
    certify,
    certify_changes,
    certify_sums,
    desed_grid,
    resolved_procedure,
)
from sedcontract.analysis.risk_control import bonferroni, fixed_sequence, holm, risk_p_value
from sedcontract.analysis.unit_losses import clip_counts, loss_sums, unit_losses
from sedcontract.cli import main
from sedcontract.errors import SedContractError
from sedcontract.experiments.certify_coverage import (
    coverage_rows,
    coverage_table,
    naive_p_value,
    pool_of,
)
from sedcontract.guard import AuditPolicy
from sedcontract.guard.curves import clip_changes
from sedcontract.guard.pipeline import audit
from sedcontract.traces import write_durations, write_events
from sedcontract.traces.decision import DecisionPolicy, read_decision
from sedcontract.traces.score_files import scores_tsv, tables_to_events
from sedcontract.traces.tsv import read_groups
from tests.helpers.detector_corpus import detector_corpus
from tests.helpers.paths import REPO


@pytest.fixture(scope="module")
def small():
    ref, tables, durations, classes = detector_corpus(3, clips=12)
    return ref, tables, durations, classes, clip_changes(ref, tables, durations)


@pytest.mark.parametrize("coordinate", ["missed", "false", "onset", "silence", "fragmentation"])
def test_each_clips_counts_are_its_audit_at_each_threshold(small, coordinate):
    """The oracle: threshold the tables into events and audit each clip alone."""
    ref, tables, durations, classes, changes = small
    grid = [0.05, 0.31, 0.5, 0.73]
    for key, cls in enumerate(classes):
        sat, obl = clip_counts(changes, coordinate, key, grid)
        for j, t in enumerate(grid):
            events = tables_to_events({c: (tb, f"{c}.tsv") for c, tb in tables.items()},
                                      DecisionPolicy(threshold=t), "scores")
            for i, clip in enumerate(changes.clips):
                report = audit(ref.select(clips=[clip]), events.select(clips=[clip]),
                               AuditPolicy(), durations={clip: durations[clip]},
                               classes=list(classes), coordinates=[coordinate])
                cell = report.modes["typed"].per_class(coordinate)[cls]
                assert (sat[i, j], obl[i, j]) == (cell.satisfied, cell.obligations), \
                    (clip, cls, t)


def test_the_clips_counts_sum_to_the_curves_of_every_coordinate(small):
    """Diagnostics too: summed over the clips, the counts are the corpus's curves (which the
    curves' own tests check against audits at every threshold)."""
    *_, classes, changes = small
    total = changes.total()
    grid = np.linspace(0, 1, 23)
    for name in total.typed:
        for key, cls in enumerate(classes):
            sat, obl = clip_counts(changes, name, key, grid)
            want = total.typed[name][cls].counts(grid)
            assert sat.sum(axis=0).tolist() == want[0].tolist(), (name, cls)
            assert obl.sum(axis=0).tolist() == want[1].tolist(), (name, cls)
    with pytest.raises(SedContractError, match="no curve of 'duration'"):
        clip_counts(changes, "duration", 0, grid)


def test_a_units_loss_is_its_share_of_unmet_obligations_and_groups_sum_first(small):
    """Each unit counts at the thresholds where it carries an obligation (for false: where
    it detects something), with its share of unmet ones; a group's counts are summed first."""
    _, _, _, _, changes = small
    grid = desed_grid()
    for coordinate in ("missed", "false"):
        sat, obl = clip_counts(changes, coordinate, 0, grid)
        losses = unit_losses(changes, coordinate, 0, grid)
        assert losses.units == changes.clips
        assert (losses.obliged == (obl > 0)).all()
        np.testing.assert_allclose(losses.losses, np.where(obl > 0, 1 - sat / np.maximum(obl, 1),
                                                           0))
        counted = (obl > 0).sum(axis=0)
        np.testing.assert_allclose(losses.risk()[counted > 0],
                                   losses.losses.sum(axis=0)[counted > 0] / counted[counted > 0])
        assert np.isnan(losses.risk()[counted == 0]).all()
    assert len(set(unit_losses(changes, "false", 0, grid).counted())) > 1  # it moves with t
    # two clips of one recording: their counts summed, then the share (not a mean of shares)
    sat, obl = clip_counts(changes, "missed", 0, grid)
    groups = {c: f"rec{i // 2}" for i, c in enumerate(changes.clips)}
    grouped = unit_losses(changes, "missed", 0, grid, groups)
    first = [i for i, c in enumerate(changes.clips) if groups[c] == grouped.units[0]]
    s, o = sat[first].sum(axis=0), obl[first].sum(axis=0)
    np.testing.assert_allclose(grouped.losses[0], np.where(o > 0, 1 - s / np.maximum(o, 1), 0))
    # the blocked sums are the full matrix's
    sums, units = loss_sums(changes, "missed", 0, grid, groups, cells=len(changes.clips) * 3)
    np.testing.assert_allclose(sums, grouped.losses.sum(axis=0))
    assert units.tolist() == grouped.counted().tolist()
    with pytest.raises(SedContractError, match="no group for clip"):
        unit_losses(changes, "missed", 0, grid, {changes.clips[0]: "x"})


def test_fixed_sequence_walks_each_coordinate_from_its_conservative_end():
    """missed rises with the threshold (tested upward from 0.1), silence falls (downward from
    0.9); δ is split over the two; the certified set is where both sequences passed."""
    grid = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    n = np.full(5, 400)
    missed = np.array([0.02, 0.05, 0.04, 0.3, 0.6]) * n
    silence = np.array([0.5, 0.3, 0.04, 0.03, 0.01]) * n
    found = certify_sums("x", grid, {"missed": missed, "silence": silence},
                         {"missed": n, "silence": n}, {"missed": 0.1, "silence": 0.1}, 0.1,
                         "fixed-sequence")
    assert found.certified.tolist() == [False, False, True, False, False]
    assert found.threshold == 0.5
    assert found.checks[0].passed.tolist() == [True, True, True, False, False]
    assert found.checks[1].passed.tolist() == [False, False, True, True, True]
    # a p-value just above δ/2 at the first step stops missed's sequence at once
    stop = certify_sums("x", grid, {"missed": missed, "silence": silence},
                        {"missed": n, "silence": n}, {"missed": 0.1, "silence": 0.1}, 0.1,
                        "fixed-sequence",
                        p_value=lambda s, u, a: np.where(s / u < a, 0.051, 1.0))
    assert not stop.certified.any()
    assert stop.why.startswith("no threshold meets missed ≤ 0.1, silence ≤ 0.1 with δ 0.1; "
                               "the closest, t 0.5: missed risk 0.040 on 400 clips (p 0.051)")
    # a threshold where no clip carries an obligation has no evidence: p 1, never certified
    gap = np.where(np.arange(5) == 2, 0.0, missed)
    none = certify_sums("x", grid, {"missed": gap}, {"missed": np.array([400, 400, 0, 400, 400])},
                        {"missed": 0.1}, 0.1, "holm")
    assert none.checks[0].p_values[2] == 1.0 and not none.certified[2]


def test_holm_and_bonferroni_test_the_largest_p_value_of_the_coordinates():
    grid = np.array([0.2, 0.4, 0.6])
    n = 300
    sums = {"onset": np.array([0.45, 0.3, 0.42]) * n, "missed": np.array([0.01, 0.02, 0.3]) * n}
    alphas = {"onset": 0.5, "missed": 0.1}
    for method, rule in (("holm", holm), ("bonferroni", bonferroni)):
        found = certify_sums("x", grid, sums, {"onset": np.full(3, n), "missed": np.full(3, n)},
                             alphas, 0.1, method)
        joint = np.maximum(risk_p_value(sums["onset"], n, 0.5),
                           risk_p_value(sums["missed"], n, 0.1))
        assert found.certified.tolist() == rule(joint, 0.1).tolist()
        assert found.threshold == 0.4  # the largest least margin among the certified
    assert resolved_procedure("auto", ["onset", "missed"]) == "holm"
    assert resolved_procedure("auto", ["silence", "missed"]) == "fixed-sequence"
    assert resolved_procedure("auto", ["false", "missed"]) == "holm"  # false has no direction
    with pytest.raises(SedContractError, match="onset has none"):
        resolved_procedure("fixed-sequence", ["onset"])


def test_mapie_gives_the_same_p_values_and_the_same_rejections():
    """MAPIE's Hoeffding–Bentkus p-values where n·r̂ is a whole number (its mean multiplied
    back rounds otherwise), and its Bonferroni, Holm and fixed-sequence rejections."""
    methods = pytest.importorskip("mapie.risk_control.methods")
    fwer = pytest.importorskip("mapie.risk_control.fwer_control")
    rng = np.random.default_rng(0)
    for n, alpha in ((40, 0.1), (212, 0.05), (1000, 0.3)):
        sums = np.arange(n + 1, dtype=np.float64)
        for binary in (False, True):
            ours = risk_p_value(sums, n, alpha, binary=binary)
            theirs = methods.compute_hoeffding_bentkus_p_value(sums / n, n, alpha, binary)
            np.testing.assert_allclose(ours, theirs[:, 0], rtol=1e-10, atol=1e-300)
    # where (k/n)·n lands above k, MAPIE's ceiling counts one loss more: its p-value is that
    # of k + 1 (valid, weaker); ours takes the whole count as it is
    assert (7 / 41) * 41 > 7
    theirs = methods.compute_hoeffding_bentkus_p_value(np.array([7 / 41]), 41, 0.3)[0, 0]
    from scipy.stats import binom

    r = 7 / 41
    hoeffding = math.exp(-41 * (r * math.log(r / 0.3) + (1 - r) * math.log((1 - r) / 0.7)))
    assert theirs == pytest.approx(min(hoeffding, math.e * binom.cdf(8, 41, 0.3)), rel=1e-12)
    assert risk_p_value(7.0, 41, 0.3) == pytest.approx(
        min(hoeffding, math.e * binom.cdf(7, 41, 0.3)), rel=1e-12)
    assert risk_p_value(7.0, 41, 0.3) < 0.8 * theirs
    for _ in range(200):
        p = np.sort(rng.uniform(0, 0.2, 12)) if rng.uniform() < 0.5 else rng.uniform(0, 0.1, 12)
        delta = float(rng.choice([0.05, 0.1, 0.2]))
        for name, ours in (("bonferroni", bonferroni(p, delta)), ("bonferroni_holm",
                                                                 holm(p, delta))):
            assert np.flatnonzero(ours).tolist() == \
                sorted(fwer.control_fwer(p, delta, name).tolist()), (name, p, delta)
        assert list(range(fixed_sequence(p, delta))) == \
            sorted(fwer.control_fwer(p, delta, "fixed_sequence").tolist())


@pytest.mark.parametrize("naive", [False, True])
def test_a_small_coverage_experiment_keeps_violations_within_delta(naive):
    """40 calibration/test splits of a generated corpus of 400 clips, missed ≥ 0.8 at δ 0.1:
    the certified set breaks the target on the corpus (the population the halves are drawn
    from) in at most δ + 2 Monte-Carlo standard errors of the splits, per class. With the
    p-value replaced by the empirical rule the same check fails: a set that reaches the edge
    of the calibration clips breaks it about half the time."""
    ref, tables, durations, _ = detector_corpus(0)
    pool = pool_of(clip_changes(ref, tables, durations), ["missed"], desed_grid())
    delta, splits = 0.1, 40
    rows = coverage_rows(pool, {"missed": 0.8}, delta, splits, seed=1,
                         p_value=naive_p_value if naive else None)
    table = [e for e in coverage_table(rows) if e["arm"] == "certified"]
    assert len(table) == 2 and all(e["certified"] > 0.9 for e in table)
    bound = delta + 2 * math.sqrt(delta * (1 - delta) / splits)
    for e in table:
        assert (e["set_corpus"] > bound) == naive, e
    if not naive:  # conservative: the edge stays inside the test clips' own edge
        assert all(e["edge_gap"] > 0 and e["slack"] > 0 for e in table)
        today = [e for e in coverage_table(rows) if e["arm"] == "curves"]
        assert all(e["chosen_test"] > bound for e in today)  # today's choice sits at the edge


def _written(tmp_path, seed=5, clips=60):
    ref, tables, durations, classes = detector_corpus(seed, clips=clips)
    folder = tmp_path / "scores"
    folder.mkdir()
    for clip, table in tables.items():
        (folder / f"{clip}.tsv").write_text(scores_tsv(table.scores, classes, 0.1))
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "durations.tsv", durations)
    return tmp_path / "ref.tsv", folder, tmp_path / "durations.tsv"


def test_the_library_and_the_command_give_one_decision(tmp_path, capsys):
    ref, folder, durations = _written(tmp_path)
    found = certify(ref, folder, durations, {"missed": 0.7, "false": 0.7}, delta=0.2)
    out = tmp_path / "decision.yaml"
    assert main(["certify", "--ref", str(ref), "--pred-scores", str(folder), "--durations",
                 str(durations), "--targets", "missed=0.7,false=0.7", "--delta", "0.2",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Certified thresholds at δ 0.2 (holm; 50 thresholds 0.01 … 0.99; each " \
        "class): with probability at least 0.8" in printed
    assert read_decision(out) == found.decided()
    data = __import__("yaml").safe_load(out.read_text())
    assert data["certificate"]["delta"] == 0.2
    assert data["certificate"]["procedure"] == "holm"  # false has no direction
    for c in found.classes:
        entry = data["certificate"]["classes"][c.name]
        assert entry["certified"] == (c.threshold is not None)
        if c.threshold is not None:
            assert entry["threshold"] == c.threshold == read_decision(out).settings_of(c.name)[0]
            at = list(found.grid).index(c.threshold)
            assert entry["targets"]["missed"]["units"] == c.checks[0].units[at]
    # audit applies it
    assert main(["audit", "--ref", str(ref), "--pred-scores", str(folder), "--durations",
                 str(durations), "--decision", str(out)]) == 0
    assert "sedcontract certify (δ 0.2" in capsys.readouterr().out


def test_joint_classes_share_delta_and_per_class_targets_override(small):
    *_, changes = small
    every = certify_changes(changes, {"missed": 0.6}, delta=0.2)
    joint = certify_changes(changes, {"missed": 0.6}, delta=0.2, joint=True)
    assert every.level() == 0.2 and joint.level() == 0.1
    for a, b in zip(every.classes, joint.classes, strict=True):
        assert b.certified.sum() <= a.certified.sum()  # half the level: never more
    own = certify_changes(changes, {"missed": 0.6}, delta=0.2, class_targets={"c1": {
        "missed": 0.9, "false": 0.5}})
    assert [k.coordinate for k in own.classes[1].checks] == ["missed", "false"]
    assert own.classes[1].checks[0].alpha == pytest.approx(0.1)
    only = certify_changes(changes, {}, class_targets={"c0": {"missed": 0.5}})
    assert [c.name for c in only.classes] == ["c0"]


def test_bad_input_is_refused_with_a_message_and_nothing_written(tmp_path, capsys):
    ref, folder, durations = _written(tmp_path, clips=8)
    base = ["certify", "--ref", str(ref), "--pred-scores", str(folder), "--durations",
            str(durations)]
    out = tmp_path / "d.yaml"
    targets = tmp_path / "targets.yaml"
    targets.write_text("targets: {missed: 0.8}\nthreshold: 0.4\n")
    cases = [
        (["--targets", "missed=0.8", "--delta", "1.5"], "δ is a probability"),
        (["--targets", "missed=1"], "no finite sample"),
        (["--targets", "duration=0.8"], "no curve of 'duration'"),
        (["--targets", str(targets)], "targets.yaml, row 2"),
        (["--targets", "missed=0.8", "--threshold", "0.3"], "certify chooses the thresholds"),
        (["--targets", "onset=0.5", "--procedure", "fixed-sequence"], "onset has none"),
        (["--targets", "missed=0.8", "--classes", "nope"], "no class 'nope'"),
        (["--targets", "missed=0.8", "--thresholds", "0.5,0.2"], "strictly increasing"),
        (["--targets", "missed=0.8", "--out", str(ref)], "also an input"),
        (["--targets", "missed=0.8,missed=0.7"], "--targets names missed twice"),
        (["--targets", "missed=0.8", "--classes", "c0,c0"], "name each class once"),
        (["--targets", "missed=0.8", "--classes", ""], "name each class once"),
    ]
    for extra, message in cases:
        before = ref.read_text()
        args = [*base, *extra] + ([] if "--out" in extra else ["--out", str(out)])
        assert main(args) == 2, extra
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (extra, err)
        assert not out.exists() and ref.read_text() == before
    groups = tmp_path / "groups.tsv"
    groups.write_text("filename\tgroup\nclip0000.wav\trec0\nclip0000.wav\trec1\n")
    assert main([*base, "--targets", "missed=0.8", "--groups", str(groups), "--out",
                 str(out)]) == 2
    assert "groups.tsv, row 3" in capsys.readouterr().err


def test_a_certificate_section_is_a_record_and_must_be_a_mapping(tmp_path):
    from sedcontract.errors import TraceFormatError

    path = tmp_path / "d.yaml"
    path.write_text("threshold: 0.3\ncertificate: {delta: 0.1}\n")
    assert read_decision(path) == DecisionPolicy(threshold=0.3)
    path.write_text("threshold: 0.3\ncertificate: 0.1\n")
    with pytest.raises(TraceFormatError, match="'certificate' must be the mapping"):
        read_decision(path)


def test_desed_speech_gate_certifies_speech(tmp_path, capsys):
    """The real DESED validation files (the DCASE baseline's implied scores): the speech
    gate's targets are certified for Speech at δ 0.1 (Holm: onset has no direction)."""
    from tests.helpers.real_dcase import DURATIONS, REF, write_implied_scores

    folder = write_implied_scores(tmp_path / "scores")
    out = tmp_path / "gate.yaml"
    gate = REPO / "src" / "sedcontract" / "examples" / "speech_gate.yaml"
    assert main(["certify", "--ref", str(REF), "--pred-scores", str(folder), "--durations",
                 str(DURATIONS), "--targets", str(gate), "--delta", "0.1", "--out",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    speech = next(line for line in printed.splitlines() if line.startswith("| Speech |"))
    assert speech.count("≤") == 3  # each target's risk under its α at the chosen threshold
    threshold = read_decision(out).settings_of("Speech")[0]
    assert 0.3 < threshold < 0.7
    # audit applies it: Speech decided at its certified threshold, the others at 0.5
    assert main(["audit", "--ref", str(REF), "--pred-scores", str(folder), "--durations",
                 str(DURATIONS), "--decision", str(out)]) == 0
    assert f"per class: Speech active iff score > {threshold:g}" in capsys.readouterr().out
    assert "- Dishes: no threshold meets missed ≤ 0.2, false ≤ 0.2, onset ≤ 0.5 with δ 0.1" \
        in printed


def test_the_audit_report_holds_the_certificate_beside_the_curves(tmp_path, capsys):
    import json

    ref, folder, durations = _written(tmp_path)
    base = ["audit", "--ref", str(ref), "--pred-scores", str(folder), "--durations",
            str(durations), "--curves", "--curves-targets", "missed=0.7,false=0.7"]
    found = certify(ref, folder, durations, {"missed": 0.7, "false": 0.7}, delta=0.2)
    assert main([*base, "--curves-certify", "0.2", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["curves"]["certificate"] == json.loads(json.dumps(found.as_dict()))
    assert "ranges" in data["curves"]  # beside today's ranges, not instead
    assert main([*base, "--curves-certify", "0.2"]) == 0
    text = capsys.readouterr().out
    assert text.index("Thresholds at which every target holds") < \
        text.index("Certified thresholds at δ 0.2 (holm")
    for extra, message in ((["--curves-certify", "0.2", "--shard", "1/2", "--format", "json"],
                            "every clip at once"),
                           (["--curves-certify", "1"], "δ must be a number in (0, 1)")):
        assert main([*base, *extra]) == 2
        assert message in capsys.readouterr().err
    assert main([*base[:-2], "--curves-certify", "0.2"]) == 2
    assert "give them (--curves-targets" in capsys.readouterr().err


def test_groups_are_the_unit_when_named(tmp_path, capsys):
    """Two clips of each recording: the certificate counts recordings (at most half as many
    units as clips) and says so."""
    import yaml

    ref, folder, durations = _written(tmp_path)
    groups = tmp_path / "groups.tsv"
    clips = sorted(p.stem for p in folder.glob("*.tsv"))
    groups.write_text("filename\tgroup\n" + "".join(f"{c}.wav\trec{i // 2}\n"
                                                     for i, c in enumerate(clips)))
    out = tmp_path / "d.yaml"
    base = ["certify", "--ref", str(ref), "--pred-scores", str(folder), "--durations",
            str(durations), "--targets", "missed=0.7,false=0.7", "--delta", "0.2"]
    assert main([*base, "--groups", str(groups), "--out", str(out)]) == 0
    assert "(p, groups)" in capsys.readouterr().out
    assert yaml.safe_load(out.read_text())["certificate"]["unit"] == "group"
    single = certify(ref, folder, durations, {"missed": 0.7}, delta=0.2)
    grouped = certify(ref, folder, durations, {"missed": 0.7}, delta=0.2,
                      groups=read_groups(groups))
    for a, b in zip(single.classes, grouped.classes, strict=True):
        assert b.checks[0].units.max() <= 30 < a.checks[0].units.max()
        assert b.checks[0].units.max() >= a.checks[0].units.max() / 2


def test_the_committed_coverage_page_is_its_rows_and_meets_the_goal():
    """docs/results/certify_coverage.md is its source rows rendered (scripts/certify_coverage.py
    render gives these bytes), and in every cell with a certificate the violation rate is
    within δ + 2 Monte-Carlo standard errors, on the test halves and on the corpus."""
    import json

    from sedcontract.experiments.certify_page import COLUMNS, bound, coverage_page
    from sedcontract.traces.csv_files import read_csv

    results = REPO / "docs" / "results"
    rows = [r for _, r in read_csv(results / "certify_coverage.csv", COLUMNS, "rows")]
    meta = json.loads((results / "certify_coverage_run.json").read_text())
    assert coverage_page({"rows": rows}, meta) == (results / "certify_coverage.md").read_text()
    issued = [r for r in rows if r["arm"] == "certified" and float(r["certified"]) > 0]
    assert len(issued) >= 20 and {r["corpus"] for r in issued} == {
        "DESED validation", "controlled (seeds 5–9)"}
    for r in issued:
        limit = bound(meta["delta"], int(r["splits"]))
        assert int(r["splits"]) >= 200
        assert float(r["set_test"]) <= limit and float(r["set_corpus"]) <= limit, r
    naive = [float(r["set_corpus"]) for r in rows if r["arm"] == "naive"]
    assert max(naive) > 0.4  # the control arm breaks targets: the check has teeth
