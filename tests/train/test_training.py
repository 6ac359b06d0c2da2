"""The training framework end to end on a tiny controlled benchmark built by the tests: every
config option instantiates, every detector runs, the exact monitor in validation agrees with
``audit`` and across processes, W&B offline holds the vector, runs resume and evaluate
reproduces the validation report."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from hydra.utils import instantiate
from omegaconf import OmegaConf

from sedcontract.config import report_errors
from sedcontract.errors import SedContractError
from sedcontract.evaluation import evaluate
from sedcontract.guard import AuditPolicy, ScoreSettings, to_json
from sedcontract.lightning.module import DetectorModule, NonFiniteLoss
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.training import build_data, train
from tests.helpers.paths import REPO
from tests.helpers.training import (
    CONFIGS,
    Payload,
    build,
    compose_config,
    csv_metrics,
    for_data,
    for_eval,
    model_overrides,
    options,
)

# ---- configuration ------------------------------------------------------------------------

def covering_set() -> list[tuple[str, str, str | None, str | None]]:
    """(model, contract, loss, augment) rows in place of the model x contract x loss x augment
    product: every model with its own parts, every model with the contract loss and the
    augmentation (both attach to whatever detector the model is, and read its policy), and each
    contract option with a plain network and with the contract-aware one (whose loss reads the
    contract's bounds). Loss and augmentation do not interact (one acts on the outputs, the
    other on the waveform), nor do contract and augmentation: their other pairs are left out."""
    rows = [(m, "standard", None, None) for m in options("model")]
    rows += [(m, "standard", "contract", "perturb") for m in options("model")
             if m != "contract_aware"]  # the preset is this row already
    rows += [(m, c, None, None) for c in options("contract") if c != "standard"
             for m in ("dilated_cnn", "contract_aware")]
    return rows


@pytest.mark.parametrize(("model", "contract", "loss", "augment"), covering_set(),
                         ids=lambda v: v or "own")
def test_every_option_instantiates_in_a_covering_set(base, model, contract, loss, augment,
                                                     encoder_checkpoints):
    parts = [f"loss={loss}"] * bool(loss) + [f"augment={augment}"] * bool(augment)
    cfg = compose_config("train", [*base, *model_overrides(model, encoder_checkpoints),
                                   f"contract={contract}", *parts])
    module = build(cfg)
    assert isinstance(module, DetectorModule)
    assert module.policy.eps == cfg.contract.eps and module.policy.hop == cfg.contract.hop
    assert module.fitted_not_trained == (model == "threshold")
    stored = json.loads(module.hparams.model_config)
    assert stored["layout"] == 2 and stored["model"]["net"]["_target_"] == cfg.model.net._target_
    if model.startswith("probe"):  # the head is built from the encoder's width
        family = "wav2vec2" if model == "probe" else model.removeprefix("probe_")
        assert stored["model"]["frontend"]["encoder"]["family"] == family
    contract_loss = loss == "contract" or (loss is None and model == "contract_aware")
    assert sorted(module.losses) == (["bce", "contract"] if contract_loss else ["bce"])
    assert sorted(stored["loss"]) == sorted(module.losses)
    assert (module.augment is not None) == (augment == "perturb" or
                                            (augment is None and model == "contract_aware"))
    for part in (*module.losses.values(), module.augment, module.frontend):
        if part is not None and hasattr(part, "edges"):
            assert part.edges == module.policy.edges
    out = module(torch.zeros(2, 16_000))
    assert out["activity"].shape == (2, 3, 50)


def test_the_covering_set_holds_every_option_and_the_pairs_that_interact():
    rows = covering_set()
    for k, group in enumerate(("model", "contract", "loss", "augment")):
        assert set(options(group)) <= {r[k] for r in rows} | (
            {"bce", "none"} if group in ("loss", "augment") else set()), group
    assert {(m, "contract", "perturb") for m in options("model")} <= \
        {(m, lo or ("contract" if m == "contract_aware" else "bce"),
          au or ("perturb" if m == "contract_aware" else "none")) for m, _, lo, au in rows}
    assert {(m, c) for c in options("contract") for m in ("dilated_cnn", "contract_aware")} <= \
        {(m, c) for m, c, _, _ in rows}


def test_presets_are_compositions(base, encoder_checkpoints):
    """model=contract_aware is the contract loss and the augmentation on its network; the old
    probe names are model=probe with an encoder."""
    preset = compose_config("train", [*base, "model=contract_aware"])
    assert preset.loss.contract.weight == 0.3 and preset.augment.waveform.perturb == 0.5
    assert preset.loss.bce.target_tolerance == 0.06
    plain = compose_config("train", [*base, "model=contract_aware", "loss=bce", "augment=none"])
    assert "contract" not in plain.loss and not plain.augment
    assert plain.model == preset.model  # the same network: the control differs in its parts
    for family in ("wav2vec2", "ast", "htsat", "beats"):
        old = compose_config("train", [*base, f"model=probe_{family}"])
        new = compose_config("train", [*base, "model=probe", f"encoder={family}"])
        assert old.model == new.model and old.encoder == new.encoder
        assert new.encoder.family == family


@pytest.mark.parametrize("overrides", [
    ["model=temporal_cnn", "loss=contract", "augment=perturb"],
    ["model=probe", "encoder=wav2vec2", "loss=contract"],
    ["model=probe", "encoder=wav2vec2", "loss=contract", "augment=perturb"],
], ids=["temporal_cnn+contract+perturb", "probe+contract", "probe+contract+perturb"])
def test_contract_losses_and_augmentation_train_any_detector(base, overrides,
                                                             encoder_checkpoints):
    extra = [f"encoder.checkpoint={encoder_checkpoints['wav2vec2']}"] \
        if "model=probe" in overrides else []
    cfg = compose_config("train", [*base, *overrides, *extra, "debug=fdr"])
    metrics, objects = train(cfg)
    module = objects["model"]
    assert module.contract is not None and module.report.traces["clips"] == 2
    for clause in ("onset", "offset", "fragmentation"):  # the clauses the default trains
        assert f"train/contract/{clause}" in metrics
        assert 0.0 <= metrics[f"val/soft/{clause}"] <= 1.0
        assert f"val/guard/typed/{clause}" in metrics
    assert "train/loss/bce" in metrics and "train/loss/contract" in metrics


def test_a_checkpoint_of_the_subclass_layout_is_refused_saying_how_to_retrain(base, tmp_path):
    old = {"_target_": "sedcontract.lightning.contract_aware.ContractAwareModule",
           "net": {"_target_": "sedcontract.models.boundary.ContractAwareDetector"}}
    path = tmp_path / "old.ckpt"
    torch.save({"state_dict": {"net.inp.weight": torch.zeros(1)},
                "hyper_parameters": {"model_config": json.dumps(old),
                                     "classes": ["speech", "tone", "burst"]}}, path)
    cfg = compose_config("eval", for_eval(base, ckpt_path=str(path)))
    with pytest.raises(SedContractError, match=r"ContractAwareModule.*Retrain it.*"
                                               r"model=contract_aware"):
        evaluate(cfg)


@pytest.mark.parametrize(("group", "option"),
                         [(g, o) for g in ("trainer", "logger", "callbacks", "debug",
                                           "experiment", "data", "paths") for o in options(g)])
def test_every_other_config_option_instantiates(base, group, option, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    overrides = for_data(base, option) if group == "data" else base
    cfg = compose_config("train", [*overrides, f"{group}={option}"])
    trainer_cfg = OmegaConf.to_container(cfg.trainer, resolve=True)
    if trainer_cfg.get("accelerator") == "gpu" and not torch.cuda.is_available():
        trainer_cfg.update(accelerator="cpu", devices=1)  # the same options, on this machine
    trainer = instantiate(trainer_cfg, logger=False, enable_progress_bar=False)
    assert trainer.max_epochs == cfg.trainer.max_epochs
    for node in (cfg.get("callbacks") or {}).values():
        assert instantiate(node) is not None
    for node in (cfg.get("logger") or {}).values():
        assert instantiate(node) is not None
    assert build_data(cfg.data, instantiate(cfg.contract)).val_split == "validation"
    assert cfg.paths.output_dir == base[0].split("=", 1)[1]


def test_eval_config_composes_with_every_data_and_contract_option(base):
    for data in options("data"):
        for contract in options("contract"):
            cfg = compose_config("eval", for_eval(for_data(base, data), data=data,
                                                  contract=contract, ckpt_path="x.ckpt"))
            assert cfg.split == "test" and cfg.get("model") is None


def test_unknown_model_lists_the_choices(tmp_path):
    run = subprocess.run([sys.executable, str(REPO / "train.py"), "model=nope",
                          f"paths.log_dir={tmp_path}"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert run.returncode != 0
    assert "Could not find 'model/nope'" in run.stderr
    assert all(name in run.stderr for name in options("model"))


# ---- runs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("model", options("model"))
def test_every_model_runs_fast_dev_run(base, model, encoder_checkpoints):
    cfg = compose_config("train", [*base, *model_overrides(model, encoder_checkpoints),
                                   "debug=fdr"])
    before = {k: v.clone() for k, v in build(cfg).state_dict().items()}
    torch.manual_seed(0)
    _, objects = train(cfg)
    module = objects["model"]
    report = module.report
    assert report.traces["clips"] == 2  # fast_dev_run validates one batch
    assert set(report.vector("typed")) == {"onset", "offset", "missed", "false", "silence",
                                           "duration", "fragmentation"}
    after = module.state_dict()
    if model == "threshold":
        assert module.net.fitted and not torch.equal(before["net.high"], after["net.high"])
    else:
        changed = [k for k in before if before[k].is_floating_point()
                   and not torch.equal(before[k], after[k])]
        assert changed, "one optimiser step changed nothing"


def test_overfitting_one_batch_lowers_the_loss(base):
    cfg = compose_config("train", [*base, "model=temporal_cnn", "debug=overfit",
                                   "trainer.max_epochs=25", "trainer.log_every_n_steps=1",
                                   "callbacks=none"])
    train(cfg)
    losses = [float(r["train/loss"]) for r in csv_metrics(Path(cfg.paths.output_dir))
              if r.get("train/loss")]
    assert len(losses) == 25
    assert losses[-1] < 0.5 * losses[0], losses


def test_training_logs_the_guard_vector_per_epoch_and_checkpoints_on_logic(base):
    cfg = compose_config("train", [*base, "model=logistic", "trainer.max_epochs=2"])
    metrics, objects = train(cfg)
    out = Path(cfg.paths.output_dir)
    rows = [r for r in csv_metrics(out) if r.get("val/logic")]
    assert [int(r["epoch"]) for r in rows] == [0, 1]  # not the sanity check
    report = objects["model"].report
    assert math.isclose(float(rows[-1]["val/guard/typed/onset"]), report.vector("typed")["onset"],
                        rel_tol=1e-6)
    assert float(rows[-1]["val/obligations/typed/onset"]) == \
        report.modes["typed"].micro("onset").obligations
    assert math.isclose(metrics["val/logic"], report.logic("typed"), rel_tol=1e-6)
    saved = json.loads((out / "val_report.json").read_text())
    assert json.loads(to_json(report)) == saved
    checkpoint = objects["trainer"].checkpoint_callback
    assert checkpoint.monitor == "val/logic" and Path(checkpoint.best_model_path).exists()
    assert (out / "checkpoints" / "last.ckpt").exists()


def test_resume_from_last_continues_the_step_count(base, monkeypatch):
    """A run stopped after its first epoch (as if killed) resumes from ``last.ckpt``: the
    weights it starts from are the saved ones and it trains only the missing epoch."""
    first = compose_config("train", [*base, "model=logistic", "trainer.max_epochs=1"])
    _, objects = train(first)
    steps = objects["trainer"].global_step
    assert steps == 4  # 8 clips, batches of 2
    saved = {k: v.clone() for k, v in objects["model"].state_dict().items()}
    seen = {"steps": 0, "start": None}
    real_step = DetectorModule.training_step

    def counting(self, batch, batch_idx):
        seen["steps"] += 1
        return real_step(self, batch, batch_idx)

    def snapshot(self):
        seen["start"] = {k: v.clone() for k, v in self.state_dict().items()}

    monkeypatch.setattr(DetectorModule, "training_step", counting)
    monkeypatch.setattr(DetectorModule, "on_train_start", snapshot)
    second = compose_config("train", [*base, "model=logistic", "trainer.max_epochs=2",
                                      "ckpt_path=last"])
    _, objects = train(second)
    assert seen["steps"] == steps  # only the second epoch
    assert all(torch.equal(seen["start"][k], saved[k]) for k in saved)
    assert objects["trainer"].global_step == 2 * steps
    assert objects["trainer"].current_epoch == 2


def test_resume_from_a_missing_checkpoint_says_how(base):
    cfg = compose_config("train", [*base, "ckpt_path=last"])
    with pytest.raises(SedContractError, match=r"last\.ckpt does not exist"):
        train(cfg)


def test_evaluate_reproduces_the_validation_report_from_the_checkpoint(base, tmp_path):
    cfg = compose_config("train", [*base, "model=dilated_cnn", "trainer.max_epochs=1"])
    _, objects = train(cfg)
    trained = objects["model"].report
    ckpt = Path(cfg.paths.output_dir) / "checkpoints" / "last.ckpt"
    eval_dir = tmp_path / "eval"
    eval_cfg = compose_config("eval", for_eval(base, **{"paths.output_dir": str(eval_dir)},
                                               ckpt_path=str(ckpt), split="validation"))
    _, eval_objects = evaluate(eval_cfg)
    assert to_json(eval_objects["model"].report) == to_json(trained)
    assert (eval_dir / "validation_report.json").read_text() == to_json(trained)
    assert (eval_dir / "validation_report.csv").exists()
    assert "scores" in json.loads((eval_dir / "validation_report_scores.json").read_text())


def test_evaluate_writes_score_files_the_audit_reads_back_to_the_same_report(
        base, tmp_path, data_root):
    """save_scores=true: one sed_scores_eval score file per clip; deciding them again under the
    same policy gives the evaluation's own guard vector, and another decision another one."""
    from sedcontract.guard import AuditPolicy, audit
    from sedcontract.scores.segment_roc import segment_auroc
    from sedcontract.traces import read_durations, read_events
    from sedcontract.traces.decision import DecisionPolicy, read_decision
    from sedcontract.traces.score_files import scores_to_events
    from sedcontract.traces.tsv import with_clips

    cfg = compose_config("train", [*base, "model=logistic"])
    train(cfg)
    ckpt = Path(cfg.paths.output_dir) / "checkpoints" / "last.ckpt"
    eval_dir = tmp_path / "eval"
    eval_cfg = compose_config("eval", for_eval(base, **{"paths.output_dir": str(eval_dir)},
                                               ckpt_path=str(ckpt), split="validation",
                                               save_scores="true"))
    _, objects = evaluate(eval_cfg)
    folder = eval_dir / "validation_report_scores"
    report = objects["model"].report
    assert sorted(p.stem for p in folder.glob("*.tsv")) == sorted(report.clips)
    ref = data_root / "controlled" / "validation.tsv"
    durations = data_root / "controlled" / "validation_durations.tsv"
    classes = list(objects["datamodule"].classes)
    again = audit(ref, scores_to_events(folder, DecisionPolicy()), AuditPolicy(),
                  durations=durations, classes=classes)
    for mode in ("typed", "union"):
        assert again.vector(mode) == report.vector(mode), mode
    other = audit(ref, scores_to_events(folder, DecisionPolicy(threshold=0.9, low=0.2)),
                  AuditPolicy(), durations=durations, classes=classes)
    assert other.vector("typed") != report.vector("typed")
    # the frame scores' segment-based AUROC joins the report, as scores computes it
    assert report.auroc["mpauc"] == pytest.approx(segment_auroc(
        folder, with_clips(read_events(ref), read_durations(durations)), durations)["mpauc"])
    # a decision file per class (contract.decision.file): the monitor decides as the audit
    decision = tmp_path / "decision.yaml"
    decision.write_text(f"threshold: 0.5\nclasses:\n  {classes[0]}: {{threshold: 0.8, "
                        f"median_filter: 60ms}}\n  {classes[-1]}: {{low: 0.3}}\n")
    filed_dir = tmp_path / "filed"
    _, filed = evaluate(compose_config("eval", for_eval(
        base, **{"paths.output_dir": str(filed_dir), "contract.decision.file": str(decision)},
        ckpt_path=str(ckpt), split="validation")))
    per_class = audit(ref, scores_to_events(folder, read_decision(decision)), AuditPolicy(),
                      durations=durations, classes=classes)
    assert filed["model"].report.vector("typed") == per_class.vector("typed")
    assert f"per class: {classes[-1]} active from score > 0.5 while score >= 0.3" in \
        filed["model"].report.policy["decision"]
    # without the option, no score files
    plain = tmp_path / "plain"
    evaluate(compose_config("eval", for_eval(base, **{"paths.output_dir": str(plain)},
                                             ckpt_path=str(ckpt), split="validation")))
    assert not (plain / "validation_report_scores").exists()


def test_evaluate_under_another_contract_changes_the_policy(base, tmp_path):
    cfg = compose_config("train", [*base, "model=logistic"])
    train(cfg)
    ckpt = Path(cfg.paths.output_dir) / "checkpoints" / "last.ckpt"
    eval_cfg = compose_config("eval", for_eval(base, **{"paths.output_dir": str(tmp_path / "e")},
                                               ckpt_path=str(ckpt), contract="tight"))
    _, objects = evaluate(eval_cfg)
    report = objects["model"].report
    assert report.policy["eps"] == "100ms"
    assert report.traces["clips"] == 3  # the test split
    metrics = objects["trainer"].callback_metrics
    assert float(metrics["test/logic"]) == pytest.approx(report.logic("typed"))
    assert not any(k.startswith("val/") for k in metrics)


def test_ddp_two_processes_give_the_vector_of_one(base):
    """5 validation clips on 2 processes: the sampler pads, one clip is seen twice."""
    results = {}
    for trainer in ("cpu", "ddp_cpu"):
        cfg = compose_config("train", [*base, "model=dilated_cnn", f"trainer={trainer}",
                                       "callbacks=none"])
        torch.manual_seed(0)
        model = build(cfg)
        torch.manual_seed(0)
        model.load_state_dict(build(cfg).state_dict())
        runner = instantiate(cfg.trainer, logger=False, enable_progress_bar=False)
        runner.validate(model, datamodule=build_data(cfg.data, model.policy))
        results[trainer] = {k: float(v) for k, v in runner.callback_metrics.items()
                            if k.startswith(("val/guard", "val/obligations", "val/scores",
                                             "val/logic"))}
    single, double = results["cpu"], results["ddp_cpu"]
    assert single.keys() == double.keys() and len(single) > 20
    for key in single:
        assert single[key] == double[key] or (math.isnan(single[key]) and
                                              math.isnan(double[key])), key


def test_wandb_offline_run_holds_the_guard_vector(base, monkeypatch):
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    cfg = compose_config("train", [*base, "model=logistic", "logger=many",
                                   "trainer.max_epochs=2"])
    _, objects = train(cfg)
    report = objects["model"].report
    runs = sorted((Path(cfg.paths.output_dir) / "wandb").glob("offline-run-*"))
    assert len(runs) == 1
    tables = sorted((runs[0] / "files" / "media" / "table" / "val").glob("guard_vector_*.json"),
                    key=lambda p: int(p.name.split("_")[2]))
    assert len(tables) == 2  # one per epoch, none for the sanity check
    first, last = (json.loads(t.read_text()) for t in tables)
    assert first["columns"] == ["epoch", "mode", "coordinate", "role", "satisfied",
                                "obligations", "score"]
    assert {r[0] for r in first["data"]} == {0} and {r[0] for r in last["data"]} == {1}
    rows = {(r[1], r[2]): r for r in last["data"]}
    for mode in ("typed", "union"):
        for name in (*report.coordinates, *report.modes[mode].diagnostics):
            cell = report.modes[mode].micro(name)
            assert rows[(mode, name)][4:6] == [cell.satisfied, cell.obligations], (mode, name)
            assert rows[(mode, name)][6] == (None if cell.vacuous else
                                             pytest.approx(cell.score))
    # the history (a binary record log offline) carries every guard key; W&B's service
    # process may still be writing it when finish() returns on a loaded machine
    keys = [f"val/guard/typed/{name}".encode() for name in report.coordinates]
    deadline = time.monotonic() + 30
    while True:
        history = next(runs[0].glob("run-*.wandb")).read_bytes()
        if all(k in history for k in keys) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for name in report.coordinates:
        assert f"val/guard/typed/{name}".encode() in history
    # the failure timelines of the worst clips, as W&B images
    assert list((runs[0] / "files" / "media" / "images" / "val").rglob("timeline*.png"))


# ---- faults -------------------------------------------------------------------------------

def test_a_non_finite_loss_stops_the_run_at_its_step(base, monkeypatch, capsys):
    real = DetectorModule.loss
    calls = {"n": 0}

    def poisoned(self, out, batch):
        loss, parts = real(self, out, batch)
        calls["n"] += 1
        return (loss * float("nan") if calls["n"] == 3 else loss), parts

    monkeypatch.setattr(DetectorModule, "loss", poisoned)
    cfg = compose_config("train", [*base, "model=logistic", "trainer.num_sanity_val_steps=0"])
    with pytest.raises(NonFiniteLoss, match="nan at global step 2"):
        train(cfg)
    calls["n"] = 0
    with pytest.raises(SystemExit) as stop:
        report_errors(train)(cfg)
    assert stop.value.code == 2
    assert "global step 2" in capsys.readouterr().err


def test_a_missing_dataset_is_explained_or_built(base, tmp_path):
    empty = tmp_path / "nothing-here"
    cfg = compose_config("train", [*base, f"paths.data_dir={empty}", "data.build=false"])
    with pytest.raises(SedContractError, match="sedcontract data build controlled"):
        train(cfg)
    cfg = compose_config("train", [*base, f"paths.data_dir={empty}", "debug=fdr"])
    train(cfg)
    assert (empty / "controlled" / "manifest.json").exists()


def test_evaluate_needs_an_existing_checkpoint(base, tmp_path):
    cfg = compose_config("eval", for_eval(base, ckpt_path=str(tmp_path / "none.ckpt")))
    with pytest.raises(SedContractError, match="does not exist"):
        evaluate(cfg)


def test_every_config_file_ships_with_the_package():
    """The package data globs cover every yaml under configs/ (installed console scripts
    compose from the package, not from a checkout)."""
    import tomllib

    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["sedcontract"]
    package = CONFIGS.parent
    shipped = {p for pattern in patterns for p in package.glob(pattern)}
    configs = set(CONFIGS.rglob("*.yaml"))
    assert configs and configs <= shipped, sorted(map(str, configs - shipped))


def test_evaluate_refuses_data_the_detector_was_not_trained_for(base, tmp_path):
    cfg = compose_config("train", [*base, "model=logistic", "+trainer.limit_train_batches=1"])
    train(cfg)
    ckpt = Path(cfg.paths.output_dir) / "checkpoints" / "last.ckpt"
    for override, message in ((("data.classes=[tone,speech,burst]",), "outputs are speech"),
                              (("contract.hop=0.01",), "frames are 0.02 s")):
        eval_cfg = compose_config("eval", for_eval(base, ckpt_path=str(ckpt)) + list(override))
        with pytest.raises(SedContractError, match=message):
            evaluate(eval_cfg)
    eval_cfg = compose_config("eval", for_eval(base, ckpt_path=str(ckpt), split="tset"))
    with pytest.raises(SedContractError, match="unknown split 'tset'"):
        evaluate(eval_cfg)
    # a detector config may still be named explicitly
    eval_cfg = compose_config("eval", for_eval(base, ckpt_path=str(ckpt), model="logistic"))
    _, objects = evaluate(eval_cfg)
    assert objects["model"].report.traces["clips"] == 3


# ---- hardening: checkpoints are data, bad runs are refused -------------------------------



def test_a_crafted_checkpoint_never_runs_its_payload(base, tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.ckpt"
    torch.save({"state_dict": {}, "hyper_parameters": {"model_config": "{}"},
                "epoch": 0, "global_step": 0, "loops": {}, "optimizer_states": [],
                "payload": Payload(marker)}, evil)
    eval_cfg = compose_config("eval", for_eval(base, ckpt_path=str(evil)))
    with pytest.raises(SedContractError, match="refused: the checkpoint holds objects"):
        evaluate(eval_cfg)
    cfg = compose_config("train", [*base, "model=logistic", f"ckpt_path={evil}"])
    with pytest.raises(SedContractError, match="refused"):
        train(cfg)
    assert not marker.exists()


def test_resuming_from_a_corrupt_or_foreign_checkpoint_is_refused(base, tmp_path):
    cfg = compose_config("train", [*base, "model=logistic", "+trainer.limit_train_batches=1"])
    train(cfg)
    last = Path(cfg.paths.output_dir) / "checkpoints" / "last.ckpt"
    corrupt = tmp_path / "corrupt.ckpt"
    corrupt.write_bytes(last.read_bytes()[:200])
    foreign = tmp_path / "foreign.ckpt"
    torch.save({"state_dict": {"net.weight": torch.zeros(3)}, "epoch": 0, "global_step": 0,
                "loops": {}, "optimizer_states": []}, foreign)
    weights = tmp_path / "weights.ckpt"
    saved = torch.load(last, weights_only=True)
    torch.save({"state_dict": saved["state_dict"]}, weights)
    for path, message in ((corrupt, "not a readable checkpoint"),
                          (foreign, "not of this detector"),
                          (weights, "training cannot resume from it")):
        resume = compose_config("train", [*base, "model=logistic", f"ckpt_path={path}"])
        with pytest.raises(SedContractError, match=message):
            train(resume)
    other = compose_config("train", [*base, "model=dilated_cnn", f"ckpt_path={last}"])
    with pytest.raises(SedContractError, match="not of this detector"):
        train(other)


def test_runs_that_would_do_nothing_or_read_bad_sizes_are_refused(base):
    cfg = compose_config("train", [*base, "trainer.max_epochs=0"])
    with pytest.raises(SedContractError, match="max_epochs=0 trains nothing"):
        train(cfg)
    for sizes, message in (("test:12", "must map splits to scene counts"),
                           ("{train:-3}", "non-negative number of scenes, got -3")):
        cfg = compose_config("train", [*base, f"data.sizes={sizes}"])
        with pytest.raises(Exception, match=message) as info:
            train(cfg)
        assert isinstance(info.value.__cause__ or info.value, SedContractError)


@pytest.mark.parametrize(("override", "message"), [
    ("+model.no_such_option=1", "model.no_such_option is not a setting of DetectorModule (its "
                                "settings: "),
    ("+model.net.depth=3", "model.net.depth is not a setting of DilatedCNN (its settings: "),
    ("+model.contract_loss.weight=0.3", "model.contract_loss is not a setting of "
                                        "DetectorModule"),
    ("+model.contract_loss.weight=0.3", "; it is loss.contract now (choose loss=contract)"),
    ("+model.pos_weight.onset=5", "; it is loss.bce.pos_weight now"),
    ("+data.no_such=1", "data.no_such is not a setting of ControlledDataModule"),
])
def test_a_key_no_part_takes_is_named_before_anything_is_built(base, capsys, override,
                                                               message):
    """Such keys once ended in a TypeError traceback from deep inside instantiation."""
    cfg = compose_config("train", [*base, override])
    with pytest.raises(SystemExit) as stop:
        report_errors(train)(cfg)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_a_decision_file_that_is_a_folder_or_aliases_ends_in_one_line(base, tmp_path, capsys):
    """``contract.decision.file`` is read by the safe reader of user files: a folder once
    ended in Hydra's "Error in call to target" (IsADirectoryError), a 400-byte file of YAML
    aliases in a MemoryError."""
    (tmp_path / "folder").mkdir()
    laughs = tmp_path / "laughs.yaml"
    laughs.write_text("a: &a [x, x, x, x, x, x, x, x, x]\n"
                      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nthreshold: *b\n")
    for path, message in ((tmp_path / "folder", "folder: not a regular file"),
                          (laughs, "laughs.yaml, row 2: an alias (*a) is not read in a "
                                   "decision file")):
        cfg = compose_config("train", [*base, f"contract.decision.file={path}"])
        with pytest.raises(SystemExit) as stop:
            report_errors(train)(cfg)
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and "Error in call" not in err


def test_a_renamed_key_on_the_command_line_is_refused_with_its_new_name(monkeypatch, capsys):
    """Without ``+``, Hydra's own message would suggest appending the old key."""
    from sedcontract import evaluation, training

    for module, argv in ((training, ["model.contract_loss.weight=0.3"]),
                         (evaluation, ["ckpt_path=x.ckpt", "model.augment.gain_db=3"])):
        monkeypatch.setattr("sys.argv", [module.__name__, *argv])
        with pytest.raises(SystemExit) as stop:
            module.main()
        assert stop.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["error: model.contract_loss.weight is not a key of the training configs; it "
                   "is loss.contract.weight now (choose loss=contract)",
                   "error: model.augment.gain_db is not a key of the training configs; it is "
                   "augment.waveform.gain_db now (choose augment=perturb)"]


def test_a_run_trains_the_same_weights_whatever_threads_the_machine_starts_it_with(base):
    """Float sums are split by the thread count: the same run on 1 and on 2 threads trained
    different weights (39 of 53 tensors of this two-epoch dilated CNN). The run now sets its
    own count (``threads``), so the weights are equal bit for bit; another ``threads`` is
    another run."""
    import torch

    before = torch.get_num_threads()
    cfg = compose_config("train", [*base, "model=dilated_cnn", "trainer.max_epochs=2"])
    weights = []
    try:
        for machine in (1, 2):
            torch.set_num_threads(machine)
            _, objects = train(cfg)
            weights.append({k: v.clone() for k, v in objects["model"].state_dict().items()})
            assert torch.get_num_threads() == cfg.threads
        assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
        one = compose_config("train", [*base, "model=dilated_cnn", "trainer.max_epochs=2",
                                       "threads=1"])
        _, objects = train(one)
        changed = [k for k, v in objects["model"].state_dict().items()
                   if not torch.equal(v, weights[0][k])]
        assert changed  # the count matters: it is the run's, not the machine's
        with pytest.raises(SedContractError, match="threads must be a whole number >= 1"):
            train(compose_config("train", [*base, "threads=0"]))
    finally:
        torch.set_num_threads(before)




@pytest.mark.parametrize("option", options("contract"))
def test_the_contract_config_group_instantiates_a_policy(option):
    cfg = compose_config("train", [f"contract={option}"])
    policy = instantiate(cfg.contract)
    assert isinstance(policy, AuditPolicy)
    # one grid for all: the data and front-end configs hold no copy of it (train() hands the
    # policy to both)
    assert "hop" not in cfg.data and "hop" not in cfg.model.frontend
    from sedcontract.training import build_data, build_model, detector_parts

    data = build_data(cfg.data, policy)
    module = build_model(detector_parts(cfg), policy, data.classes)
    assert data.policy is policy is module.policy and module.frontend.hop == policy.hop
    assert policy.eps == {"standard": None, "tight": "100ms", "loose": "400ms"}[option]
    assert policy.decision == DecisionPolicy() and policy.scores == ScoreSettings()
