"""Validation curves (``curves=true``): the exact monitor keeps the split's frame scores and
makes their guard curves, whose counts at its own threshold are its guard vector; training
logs their areas as ``val/curves/<coordinate>`` and ``val/curves/typed/<coordinate>``, which
can rank checkpoints, on one process as on two; a policy the curves are not exact for is
refused when the detector is built."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from hydra.utils import instantiate

from sedcontract.analysis.curve_summaries import curve_summary
from sedcontract.contracts.parser import parse_contract
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy
from sedcontract.guard.curves import CURVE_COORDINATES, guard_curves
from sedcontract.lightning.metric import ContractMonitor, owned
from sedcontract.lightning.module import curve_metrics
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.grid import frames_covering, to_us
from sedcontract.traces.score_files import ScoreTable
from sedcontract.training import build_data, train
from tests.helpers.torch_scores import random_scores as smooth_scores
from tests.helpers.training import build, compose_config, csv_metrics

HOP = 0.02
CLASSES = ("speech", "tone", "burst")  # burst has no reference event: its areas are NaN
CLIPS = ("a", "b", "c", "d", "e")
# c and e end inside their last grid frame (76 and 100 frames, 75 and 99 of them whole)
DURATIONS = {"a": 2.0, "b": 2.0, "c": 1.51, "d": 2.0, "e": 1.99}
GUARD = ("onset", "offset", "missed", "false", "silence", "fragmentation")


def reference() -> EventList:
    return EventList.from_rows([
        ("a", 0.10, 0.70, "speech"), ("a", 1.00, 1.60, "tone"), ("a", 1.70, 1.90, "speech"),
        ("b", 0.30, 1.90, "speech"),
        ("c", 0.00, 0.40, "tone"), ("c", 0.90, 1.51, "speech"),
        ("e", 0.52, 0.98, "tone"), ("e", 1.50, 1.99, "speech"),
    ], clips=CLIPS)


def random_scores(seed: int) -> torch.Tensor:
    """Smooth random frame scores ``[clips, classes, 100]`` that cross 0.5 a few times."""
    return smooth_scores(seed, len(CLASSES))


def monitor(**settings) -> ContractMonitor:
    return ContractMonitor(reference(), DURATIONS, CLASSES, AuditPolicy(hop=HOP, **settings),
                           curves=True)


def seen(m: ContractMonitor, scores: torch.Tensor):
    """What ``compute`` gives after batches of two clips and c seen again with other scores
    (the monitor keeps a clip's last scores, for the curves as for the counts)."""
    m.update(scores[:2], CLIPS[:2])
    m.update(scores[2:], CLIPS[2:])
    m.update(scores[[2], :, :76].flip(-1), ["c"])
    return m.compute()


def last_scores(scores: torch.Tensor) -> dict[str, np.ndarray]:
    """Each clip's scores on its own grid ``[frames, classes]``, as :func:`seen` leaves them."""
    out = {}
    for i, clip in enumerate(CLIPS):
        n = int(frames_covering(to_us(DURATIONS[clip]), int(to_us(HOP))))
        values = scores[i, :, :76].flip(-1) if clip == "c" else scores[i]
        out[clip] = values[:, :n].T.double().numpy()
    return out


POLICIES = {
    "default": {},
    "any_overlap+closed": {"projection": "any_overlap", "edges": "closed"},
    "median+threshold": {"decision": DecisionPolicy(threshold=0.3, median_filter=0.1)},
    # 3.5 frames: a filter that rounds by the rows' length, float noise in it or not
    "half-frame median": {"decision": DecisionPolicy(median_filter=0.07)},
    "eps": {"eps": "60ms"},
}


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("policy", POLICIES)
def test_the_curves_at_the_monitors_threshold_are_its_guard_vector(policy, seed):
    """Count for count, typed (per class) and union, every coordinate the curves hold (the
    six clauses and the diagnostics): the frames the curves read are the monitor's."""
    got = seen(monitor(**POLICIES[policy]), random_scores(seed))
    t = POLICIES[policy].get("decision", DecisionPolicy()).threshold
    report = got.report
    compared = 0
    for name in CURVE_COORDINATES:
        if name not in report.coordinates and name not in report.modes["typed"].diagnostics:
            continue
        for cls, cell in report.modes["typed"].per_class(name).items():
            assert got.curves.typed[name][cls].at(t) == (cell.satisfied, cell.obligations), \
                (name, cls)
        cell = report.modes["union"].micro(name)
        assert got.curves.union[name].at(t) == (cell.satisfied, cell.obligations), name
        compared += 1
    assert compared == len(CURVE_COORDINATES)
    assert set(GUARD) <= set(report.coordinates)
    # not vacuous: the clauses oblige at the threshold, and the curves change with it
    union = report.modes["union"]
    assert all(union.micro(name).obligations > 0 for name in GUARD)
    assert got.curves.union["missed"].at(1.0) != got.curves.union["missed"].at(t)


def test_the_curves_are_those_of_the_scores_as_score_tables():
    """Each clip's frame ``k`` is the row ``[k·hop, (k+1)·hop)`` cut at its duration: the
    monitor's curves are ``guard_curves`` of those tables, breakpoint for breakpoint."""
    scores = random_scores(5)
    got = seen(monitor(), scores).curves
    tables = {}
    for clip, values in last_scores(scores).items():
        k = np.arange(len(values))
        tables[clip] = ScoreTable(k * HOP, np.minimum((k + 1) * HOP, DURATIONS[clip]), CLASSES,
                                  values, k + 2)
    expected = guard_curves(reference(), tables, DURATIONS, AuditPolicy(hop=HOP))
    for name in CURVE_COORDINATES:
        for mine, theirs in [(got.union[name], expected.union[name]),
                             *((got.typed[name][c], expected.typed[name][c]) for c in CLASSES)]:
            assert np.array_equal(mine.values, theirs.values), name
            assert np.array_equal(mine.satisfied, theirs.satisfied), name
            assert np.array_equal(mine.obligations, theirs.obligations), name
            assert mine.base == theirs.base, name


def test_the_logged_areas_are_the_union_and_the_mean_of_the_defined_class_areas():
    curves = seen(monitor(), random_scores(2)).curves
    hours = sum(DURATIONS.values()) / 3600  # 9.5 s: one false event is 379 per hour
    areas = curve_summary(curves, hours, 5000.0)["areas"]
    metrics = curve_metrics(curves, hours, 5000.0, "val")
    assert set(metrics) == {f"val/curves/{p}{n}" for p in ("", "typed/")
                            for n in CURVE_COORDINATES}
    assert math.isnan(areas["onset"]["burst"])  # no reference event: vacuous at every budget
    for name in CURVE_COORDINATES:
        union = metrics[f"val/curves/{name}"]
        assert union == areas[name]["*"] or (math.isnan(union) and math.isnan(areas[name]["*"]))
        defined = [areas[name][c] for c in CLASSES if not math.isnan(areas[name][c])]
        typed = metrics[f"val/curves/typed/{name}"]
        assert typed == pytest.approx(sum(defined) / len(defined)) if defined \
            else math.isnan(typed)
    assert metrics["val/curves/typed/onset"] == pytest.approx(
        (areas["onset"]["speech"] + areas["onset"]["tone"]) / 2)
    # another budget, another area: the budget reaches the summary
    assert curve_metrics(curves, hours, 50.0)["val/curves/onset"] != metrics["val/curves/onset"]


def test_a_clip_belongs_to_the_lowest_rank_that_saw_it():
    seen_by = [["a", "b"], ["b", "c", "a"], None, ["d", "c", "e"]]
    assert [owned(seen_by, r) for r in range(4)] == [["a", "b"], ["c"], [], ["d", "e"]]
    clips = [c for r in range(4) for c in owned(seen_by, r)]
    assert sorted(clips) == ["a", "b", "c", "d", "e"]  # each clip once


def test_curves_of_parts_joined_are_the_curves_of_all():
    """What the ranks do: each makes the curves of its own clips; joined, they are one
    monitor's (the two monitors share clip b, which the owner rule gives to the first)."""
    from sedcontract.guard.curves import join_curves

    scores = random_scores(4)
    alone = monitor()
    alone.update(scores, CLIPS)
    first, second = monitor(), monitor()
    first.update(scores[:3], CLIPS[:3])
    second.update(scores[1:], CLIPS[1:])
    lists = [[c for c in CLIPS if c in m.scores_of] for m in (first, second)]
    parts = [m.curves_of(owned(lists, r)) for r, m in enumerate((first, second))]
    joined, whole = join_curves(parts), alone.compute().curves
    for t in (0.1, 0.5, 0.8):
        assert joined.at(t) == whole.at(t) and joined.at(t, "union") == whole.at(t, "union")


@pytest.mark.parametrize(("settings", "named"), [
    ({"decision": DecisionPolicy(low=0.3)}, "hysteresis"),
    ({"decision": DecisionPolicy(classes={"tone": {"low": 0.2}})}, "hysteresis"),
    ({"projection": "majority"}, "majority"),
    ({"contract": parse_contract("clause missed: each ref require "
                                 "count(pred overlapping ref) >= 1")}, "standard contract"),
])
def test_a_policy_the_curves_cannot_hold_is_refused_when_the_monitor_is_made(settings, named):
    with pytest.raises(SedContractError, match=named):
        monitor(**settings)
    ContractMonitor(reference(), DURATIONS, CLASSES, AuditPolicy(hop=HOP, **settings))  # off


@pytest.mark.parametrize(("override", "named"), [
    ("contract.decision.low=0.3", "curves=true.*hysteresis"),
    ("contract.projection=majority", "curves=true.*projection majority"),
])
def test_training_with_curves_under_such_a_policy_stops_before_any_batch(base, override, named):
    cfg = compose_config("train", [*base, "model=logistic", "curves=true", override])
    with pytest.raises(SedContractError, match=named):
        build(cfg, curves=True)
    with pytest.raises(SedContractError, match=named):
        train(cfg)
    assert not (Path(cfg.paths.output_dir) / "checkpoints").exists()  # nothing trained
    build(compose_config("train", [*base, "model=logistic", override]))  # curves off: fine


def test_bad_curve_settings_are_refused(base):
    for value, named in (("0", "curves_max_rate must be a positive"),
                         ("-5", "curves_max_rate must be a positive"),
                         ("inf", "curves_max_rate must be a positive")):
        cfg = compose_config("train", [*base, "curves=true", f"curves_max_rate={value}"])
        with pytest.raises(SedContractError, match=named):
            train(cfg)
    with pytest.raises(SedContractError, match="curves must be true or false"):
        train(compose_config("train", [*base, "curves=maybe"]))


def test_training_logs_the_curve_areas_and_a_checkpoint_ranks_by_one(base):
    """Two epochs with curves on and checkpoints ranked by val/curves/onset: every key is
    logged each epoch, the values are the areas of the validation scores' curves, and the
    best checkpoint is the epoch with the highest onset area."""
    cfg = compose_config("train", [*base, "model=logistic", "trainer.max_epochs=2",
                                   "curves=true", "curves_max_rate=5000",
                                   "callbacks.model_checkpoint.monitor=val/curves/onset",
                                   "+callbacks.report_files.scores=true"])
    assert compose_config("train", base).curves is False  # off unless asked
    metrics, objects = train(cfg)
    keys = {f"val/curves/{p}{n}" for p in ("", "typed/") for n in CURVE_COORDINATES}
    assert keys <= set(metrics)
    assert 0 <= metrics["val/curves/onset"] <= 1 and 0 <= metrics["val/curves/typed/onset"] <= 1
    # the last epoch's values are the areas of its scores (kept for the score files)
    module, datamodule = objects["model"], objects["datamodule"]
    ref, durations = datamodule.reference("validation")
    scores = module.scores_seen
    assert sorted(scores) == sorted(ref.clips)
    tables = {}
    for clip, values in scores.items():
        k = np.arange(len(values))
        tables[clip] = ScoreTable(k * HOP, np.minimum((k + 1) * HOP, durations[clip]),
                                  datamodule.classes, values.astype(np.float64), k + 2)
    expected = curve_metrics(guard_curves(ref, tables, durations, module.policy),
                             sum(durations.values()) / 3600, 5000.0)
    for key in keys:
        assert metrics[key] == pytest.approx(expected[key], rel=1e-6, nan_ok=True), key
    # the checkpoint monitor ranks by the logged onset area
    rows = [r for r in csv_metrics(Path(cfg.paths.output_dir)) if r.get("val/curves/onset")]
    onset = [float(r["val/curves/onset"]) for r in rows]
    assert len(onset) == 2
    checkpoint = objects["trainer"].checkpoint_callback
    assert checkpoint.monitor == "val/curves/onset"
    best = int(np.argmax(onset))
    assert float(checkpoint.best_model_score) == pytest.approx(onset[best])
    assert Path(checkpoint.best_model_path).name == f"epoch_{best:03d}.ckpt"


def test_two_processes_log_the_curves_of_one(base):
    """5 validation clips on 2 processes: the sampler pads, one clip is seen twice and counts
    once (it belongs to the lowest rank that saw it)."""
    results = {}
    for trainer in ("cpu", "ddp_cpu"):
        cfg = compose_config("train", [*base, "model=dilated_cnn", f"trainer={trainer}",
                                       "callbacks=none"])
        torch.manual_seed(0)
        model = build(cfg, curves=True)
        runner = instantiate(cfg.trainer, logger=False, enable_progress_bar=False)
        runner.validate(model, datamodule=build_data(cfg.data, model.policy))
        results[trainer] = {k: float(v) for k, v in runner.callback_metrics.items()
                            if k.startswith("val/curves/")}
    single, double = results["cpu"], results["ddp_cpu"]
    assert len(single) == 2 * len(CURVE_COORDINATES) and single.keys() == double.keys()
    for key in single:
        assert single[key] == double[key] or (math.isnan(single[key]) and
                                              math.isnan(double[key])), key
