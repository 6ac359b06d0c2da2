"""Certification in training (``callbacks.certification.targets=...``): after every validation
the split's certified thresholds are logged (``val/certified/<class>``), printed and written
as a decision file, the same certificate ``sedcontract certify`` gives on the saved validation
scores; off by default; a bad targets file stops the run before any batch."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from hydra.errors import InstantiationException

from sedcontract.analysis.certify import certify
from sedcontract.errors import SedContractError
from sedcontract.traces.decision import read_decision
from sedcontract.training import train
from tests.helpers.paths import REPO
from tests.helpers.training import compose_config, csv_metrics

GATE = REPO / "src" / "sedcontract" / "examples" / "speech_gate.yaml"


def test_the_validation_certificate_is_certifys_on_the_saved_scores(base, data_root):
    cfg = compose_config("train", [*base, "model=logistic",
                                   f"callbacks.certification.targets={GATE}",
                                   "callbacks.certification.delta=0.5",
                                   "+callbacks.report_files.scores=true"])
    train(cfg)
    out = Path(cfg.paths.output_dir)
    written = out / "val_certificate.yaml"
    data = yaml.safe_load(written.read_text())
    assert data["certificate"]["delta"] == 0.5 and data["certificate"]["procedure"] == "holm"
    folder = data_root / "controlled"
    oracle = certify(folder / "validation.tsv", out / "val_report_scores",
                     folder / "validation_durations.tsv",
                     {"missed": 0.8, "false": 0.8, "onset": 0.5}, delta=0.5)
    assert data["certificate"] == yaml.safe_load(yaml.safe_dump(oracle.as_dict()))
    assert read_decision(written).classes == oracle.decided().classes
    logged = csv_metrics(out)
    last = [row for row in logged if row.get("val/certified/speech")][-1]
    for c in oracle.classes:
        value = float(last[f"val/certified/{c.name}"])
        assert (math.isnan(value) and c.threshold is None) or value == c.threshold
    assert float(last["val/certified/classes"]) == sum(c.threshold is not None
                                                       for c in oracle.classes)


def test_certification_is_off_unless_targets_are_given(base):
    cfg = compose_config("train", [*base, "model=logistic"])
    assert cfg.callbacks.certification.targets is None
    train(cfg)
    assert not (Path(cfg.paths.output_dir) / "val_certificate.yaml").exists()


def test_a_bad_targets_file_stops_the_run_before_any_batch(base, tmp_path):
    bad = tmp_path / "targets.yaml"
    bad.write_text("targets: {missed: 1.5}\n")
    cfg = compose_config("train", [*base, "model=logistic",
                                   f"callbacks.certification.targets={bad}"])
    with pytest.raises(InstantiationException) as raised:  # train.py prints the cause
        train(cfg)
    assert isinstance(raised.value.__cause__, SedContractError)
    assert "targets.yaml, row 1: target 'missed' must be a score" in str(raised.value.__cause__)
    assert not (Path(cfg.paths.output_dir) / "checkpoints").exists()


def test_a_policy_the_certificate_cannot_hold_stops_before_any_batch(base):
    cfg = compose_config("train", [*base, "model=logistic", "contract.decision.low=0.3",
                                   f"callbacks.certification.targets={GATE}"])
    with pytest.raises(SedContractError, match=r"callbacks\.certification: hysteresis"):
        train(cfg)
    assert not (Path(cfg.paths.output_dir) / "checkpoints").exists()
