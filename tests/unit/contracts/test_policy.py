"""The audit policy: one frozen object, checked in one place, built from keywords, from a
config mapping or from the shipped Hydra ``contract`` group, and written into the report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import sedcontract
from sedcontract.contracts import parse_contract
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, ScoreSettings, to_json
from sedcontract.traces.decision import DecisionPolicy
from tests.helpers.examples import worked_example

REF, PRED = worked_example()
DURATIONS = {"c": 4.0}


@pytest.mark.parametrize(("settings", "fragment"), [
    ({"hop": "0.02"}, "grid hop must be a number of seconds"),
    ({"hop": 0.0}, "grid hop must be a positive number"),
    ({"projection": "middle"}, "unknown projection 'middle'"),
    ({"edges": "soft"}, "unknown clip-edge policy 'soft'"),
    ({"rounding": "up"}, "unknown rounding 'up'"),
    ({"matching": "best"}, "unknown matching method 'best'"),
    ({"aggregation": "mean"}, "unknown aggregation 'mean'"),
    ({"eps": 0.2}, "binding 'eps' must be frames"),
    ({"eps": "fast"}, "eps 'fast' is not a time; write it with its unit"),
    ({"decision": {"threshold": 0.5}}, "decision must be a DecisionPolicy or None"),
    ({"scores": {"t_collar": 0.2}}, "scores must be a ScoreSettings or None"),
    ({"max_frames": 0}, "max_frames must be a positive integer"),
    ({"contract": None}, "a contract is a shipped name"),
])
def test_every_setting_is_checked_when_the_policy_is_made(settings, fragment):
    with pytest.raises(SedContractError, match=re.escape(fragment)):
        AuditPolicy(**settings)


def test_config_mappings_become_objects_and_unknown_keys_are_named():
    policy = AuditPolicy.from_config(eps="100ms", decision={"threshold": 0.3},
                                     scores={"t_collar": 0.1}, matching=None)
    assert policy.decision == DecisionPolicy(threshold=0.3)
    assert policy.scores == ScoreSettings(t_collar=0.1)
    with pytest.raises(SedContractError, match=r"unknown decision setting\(s\) \['median'\]"):
        AuditPolicy.from_config(decision={"median": 0.1})
    with pytest.raises(SedContractError, match=r"unknown policy setting\(s\) \['monitor'\]"):
        AuditPolicy.from_config(monitor={"eps": "100ms"})
    with pytest.raises(SedContractError, match=r"unknown audit option\(s\) \['epsilon'\]"):
        AuditPolicy().but(epsilon="100ms")
    with pytest.raises(SedContractError, match="unknown audit option"):
        sedcontract.audit(REF, PRED, epsilon="100ms")


def test_keywords_a_policy_and_a_mapping_give_the_same_report():
    settings = {"eps": "120ms", "matching": "greedy", "aggregation": "macro",
                "scores": ScoreSettings(t_collar=0.1), "decision": DecisionPolicy(0.4)}
    by_keywords = sedcontract.audit(REF, PRED, durations=DURATIONS, **settings)
    policy = AuditPolicy(**settings)
    by_policy = sedcontract.audit(REF, PRED, policy, durations=DURATIONS)
    by_mapping = sedcontract.audit(REF, PRED, {**settings}, durations=DURATIONS)
    assert to_json(by_keywords) == to_json(by_policy) == to_json(by_mapping)
    assert by_policy.policy == policy.report(policy.conversions())
    assert by_policy.policy["scores"]["boundary_frames"] == 5  # 0.1 s on the 20 ms grid
    changed = sedcontract.audit(REF, PRED, policy, durations=DURATIONS, eps="0ms")
    assert changed.policy["eps"] == "0ms" and policy.eps == "120ms"  # the policy is frozen


def test_scores_alone_report_the_policy_the_audit_reports():
    policy = AuditPolicy(scores=ScoreSettings())
    full = sedcontract.audit(REF, PRED, policy, durations=DURATIONS)
    alone = sedcontract.score(REF, PRED, policy, durations=DURATIONS)
    assert alone.policy == full.policy
    assert {k: v.overall for k, v in alone.scores.items()} == \
        {k: v.overall for k, v in full.scores.items()}


def test_a_parsed_contract_is_named_by_its_own_name():
    contract = parse_contract("clause c: on ref.onset require N[2] pred.onset\n", name="mine")
    report = sedcontract.audit(REF, PRED, AuditPolicy(contract=contract), durations=DURATIONS)
    assert report.policy["contract"] == "mine" and report.coordinates == ("c",)


def test_the_shipped_standard_policy_restates_the_dataclass_defaults():
    """configs/contract/standard.yaml and the command-line options must not drift from the
    dataclasses that declare each default."""
    import argparse
    from dataclasses import fields

    import yaml

    from sedcontract.cli import options

    text = (Path(sedcontract.__file__).parent / "configs" / "contract" / "standard.yaml")
    config = yaml.safe_load(text.read_text())
    defaults = {f.name: f.default for f in fields(AuditPolicy)}
    for name, value in config.items():
        if name.startswith("_"):
            continue
        if name in ("decision", "scores"):
            kind = DecisionPolicy if name == "decision" else ScoreSettings
            own = {f.name: f.default for f in fields(kind)}
            if name == "decision":  # no classes of their own, no file, by default
                assert (value.pop("classes"), value.pop("file")) == ({}, None)
                assert DecisionPolicy().classes == ()
            assert {k: own[k] for k in value} == value, name
        else:
            assert defaults[name] == value, name
    parser = argparse.ArgumentParser()
    for kind in (AuditPolicy, ScoreSettings):
        options.add_options(parser, kind)
    options.add_decision_options(parser)
    args = parser.parse_args([])
    assert to_json_policy(options.policy(args, scores=True)) == to_json_policy(
        AuditPolicy(scores=ScoreSettings()))
    assert options.decision(args) == DecisionPolicy()
    changed = parser.parse_args(["--hop", "64ms", "--dtc", "0.7", "--no-evaluate-offset",
                                 "--event-matching", "greedy", "--median-filter", "0.1s"])
    built = options.policy(changed, decision=options.decision(changed), scores=True)
    assert (built.hop, built.scores.dtc_threshold, built.scores.evaluate_offset,
            built.scores.matching, built.decision.median_filter) == (0.064, 0.7, False,
                                                                     "greedy", 0.1)


def to_json_policy(policy: AuditPolicy) -> dict:
    return policy.report(policy.conversions())


def test_eps_as_text_wants_its_unit_as_the_options_and_configs_do():
    """``AuditPolicy(eps='200')`` once read 200 frames silently; the options and configs
    refuse a bare number. ``'5f'`` is 5 frames and ``'0'`` needs no unit, as there."""
    from sedcontract.traces.times import TimeError

    with pytest.raises(TimeError, match=r"eps '200' has no unit; write 200ms, 200s or 200f"):
        AuditPolicy(eps="200")
    assert AuditPolicy(eps="5f").eps == 5 and AuditPolicy(eps="0").eps == 0
    assert AuditPolicy(eps="200ms").eps == "200ms" and AuditPolicy(eps=7).eps == 7
