"""The contract-aware detector and the parts it is composed of: the shared boundary head, the
contract loss and the augmentation on any detector, fine-tuning from another run's weights,
labels that follow the augmented audio, and training through config with the shipped
contract or a user's own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from hydra.core.global_hydra import GlobalHydra
from hydra.utils import instantiate

from sedcontract.contracts.policy import AuditPolicy
from sedcontract.data.augment import Augmentation, warp_frames
from sedcontract.errors import SedContractError
from sedcontract.lightning.checkpoints import init_weights
from sedcontract.lightning.losses import ContractObjective, FrameBCE, smooth_boundaries
from sedcontract.lightning.module import DetectorModule
from sedcontract.lightning.transforms import FeatureMasks, Perturb
from sedcontract.models import BoundaryHead, ContractAwareDetector, DilatedCNN, LogMel
from sedcontract.models.detectors import TemporalCNN
from sedcontract.training import train
from tests.helpers.training import build, compose_config

CLASSES = ("speech", "tone", "burst")


def test_a_fresh_boundary_head_is_its_projection_and_resamples_to_the_grid():
    torch.manual_seed(0)
    head = BoundaryHead(8, 3).eval()
    h = torch.randn(2, 8, 20)
    out = head(h)
    logits = head.proj(h)
    torch.testing.assert_close(torch.cat([out[k] for k in ("activity", "onset", "offset")], 1),
                               logits)
    assert head(h, frames=50)["onset"].shape == (2, 3, 50)  # encoder steps → grid frames


def module_of(net, classes=CLASSES, **kwargs):
    config = {"model": {"frontend": {"n_mels": 16}}}
    return DetectorModule(net, LogMel(n_mels=16), policy=AuditPolicy(), classes=list(classes),
                          model_config=json.dumps(config), **kwargs)


def save(module, path: Path) -> Path:
    torch.save({"state_dict": module.state_dict(),
                "hyper_parameters": {"classes": list(module.classes),
                                     "model_config": module.hparams.model_config}}, path)
    return path


def test_fine_tuning_starts_from_the_source_detector_exactly(tmp_path):
    torch.manual_seed(0)
    source = module_of(DilatedCNN(16, 3, channels=8, blocks=3))
    with torch.no_grad():  # not a fresh initialisation: every weight moved
        for p in source.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    path = save(source, tmp_path / "dilated.ckpt")
    target = module_of(ContractAwareDetector(16, 3, channels=8, blocks=3))
    kept = init_weights(target, path, fresh=("net.heads.refine.",), classes=CLASSES,
                        frontend={"n_mels": 16})
    assert kept and all(k.startswith("net.heads.refine.") for k in kept)
    source.eval(), target.eval()
    wave = torch.randn(2, 16_000)
    for head in ("activity", "onset", "offset"):
        torch.testing.assert_close(target(wave)[head], source(wave)[head])


def test_a_mismatched_checkpoint_is_refused_naming_what_differs(tmp_path):
    target = module_of(ContractAwareDetector(16, 3, channels=8, blocks=3))
    fresh = ("net.heads.refine.",)
    wider = save(module_of(DilatedCNN(16, 3, channels=12, blocks=3)), tmp_path / "w.ckpt")
    with pytest.raises(SedContractError, match=r"other shapes: net\.body\.0\.conv\.bias "
                                               r"\(12,\) there, \(8,\) here"):
        init_weights(target, wider, fresh=fresh)
    other = save(module_of(TemporalCNN(16, 3, channels=8, layers=2)), tmp_path / "t.ckpt")
    with pytest.raises(SedContractError, match=r"not in this detector: net\.body\.0\.bias"):
        init_weights(target, other, fresh=fresh)
    two = save(module_of(DilatedCNN(16, 2, channels=8, blocks=3), classes=("speech", "tone")),
               tmp_path / "two.ckpt")
    with pytest.raises(SedContractError, match=r"classes are speech, tone; this detector's "
                                               r"are speech, tone, burst"):
        init_weights(target, two, fresh=fresh, classes=CLASSES)
    same = save(module_of(DilatedCNN(16, 3, channels=8, blocks=3)), tmp_path / "s.ckpt")
    with pytest.raises(SedContractError, match=r"front end differs.*n_mels: 16 there, 32 here"):
        init_weights(target, same, fresh=fresh, frontend={"n_mels": 32})
    with pytest.raises(SedContractError, match="missing from the checkpoint"):
        init_weights(target, same)  # without declaring the head's refinement fresh


def test_augmented_labels_follow_the_shifted_audio():
    hop, sr = 0.02, 16_000
    frames = 100
    wave = np.zeros((1, frames * 320), dtype=np.float32)
    wave[0, 40 * 320:45 * 320] = 1.0  # sound in frames 40–44
    active = np.zeros((1, 2, frames), dtype=bool)
    active[0, 0, 40:45] = True
    only_shift = Augmentation(perturb=0.0, gain_db=0.0, shift=0.3, background=0.0)
    for seed in range(6):
        w, a = only_shift(wave, active, np.array([wave.shape[1]]), np.array([frames]), hop=hop,
                          sample_rate=sr, rng=np.random.default_rng(seed))
        loud = np.flatnonzero(np.abs(w[0]).reshape(frames, 320).max(1) > 0.5)
        np.testing.assert_array_equal(np.flatnonzero(a[0, 0]), loud)
        assert not a[0, 1].any() and len(loud) == 5


def test_augmentation_keeps_labels_lengths_and_padding():
    rng = np.random.default_rng(0)
    wave = rng.normal(size=(3, 32_000)).astype(np.float32) * 0.1
    wave[2, 16_000:] = 0.0  # the third clip is 1 s long, padded
    active = rng.random((3, 2, 100)) < 0.3
    active[2, :, 50:] = False
    augment = Augmentation(perturb=1.0, families=("noise", "clipping", "gain_drift"),
                           gain_db=3.0, shift=0.0, background=1.0)
    w, a = augment(wave, active, np.array([32_000, 32_000, 16_000]), np.array([100, 100, 50]),
                   hop=0.02, sample_rate=16_000, rng=rng)
    np.testing.assert_array_equal(a, active)  # none of these moves the labels
    assert not np.allclose(w, wave) and np.all(w[2, 16_000:] == 0.0)
    with pytest.raises(SedContractError, match="unknown perturbation"):
        Augmentation(families=("echo",))
    with pytest.raises(SedContractError, match="probability"):
        Augmentation(perturb=1.5)


def test_jitter_labels_move_with_the_warp():
    active = np.zeros((1, 50), dtype=bool)
    active[0, 10:20] = True
    np.testing.assert_array_equal(warp_frames(active, lambda t: t, 0.02), active)
    moved = warp_frames(active, lambda t: t + 0.1, 0.02)  # everything 5 frames later
    assert np.flatnonzero(moved[0]).tolist() == list(range(15, 25))


def test_unknown_augmentation_loss_or_mask_settings_are_named():
    policy = AuditPolicy()
    for part, kwargs, fragment in (
            (Perturb, {"waveform": {"gain": 3.0}}, "unknown augment.waveform setting"),
            (Perturb, {"feature_masks": {"width": 3}}, "unknown augment.feature_masks"),
            (ContractObjective, {"weight": -1.0}, "loss.contract.weight must be a number"),
            (ContractObjective, {"semantics": "fuzzy"}, "unknown soft semantics"),
            (FrameBCE, {"target_tolerance": -0.1}, "target_tolerance must be"),
            (FrameBCE, {"weights": {"activty": 1.0}}, "unknown loss head")):
        with pytest.raises(SedContractError, match=fragment):
            part(policy=policy, **kwargs)
    with pytest.raises(TypeError):
        ContractObjective(policy=policy, **{"lambda": 1.0})


def test_boundary_targets_are_spread_over_the_tolerance():
    target = torch.zeros(1, 1, 11)
    target[0, 0, 5] = 1.0
    spread = smooth_boundaries(target, 2)[0, 0].tolist()
    assert spread == pytest.approx([0, 0, 0, 1 / 3, 2 / 3, 1, 2 / 3, 1 / 3, 0, 0, 0])


def test_feature_masks_hide_bands_in_training_only():
    masks = FeatureMasks(time=1, time_width=5, freq=1, freq_width=3)
    x = torch.ones(4, 16, 40)
    torch.manual_seed(0)
    assert (masks.train()(x) == 0).any()
    assert torch.equal(masks.eval()(x), x)
    with pytest.raises(SedContractError, match="integer >= 0"):
        FeatureMasks(time=-1)


# ---- through config -----------------------------------------------------------------------

CLAUSES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")


def test_contract_aware_logs_each_clause_loss_and_its_soft_twin_beside_the_monitor(base):
    """The default trains the boundary clauses and fragmentation (chosen on the development
    benchmarks): their losses and soft satisfactions are logged beside the monitor's every
    coordinate; a clause of weight 0 is not computed, and weighted it is logged too."""
    cfg = compose_config("train", [*base, "model=contract_aware", "debug=fdr"])
    metrics, objects = train(cfg)
    trained = ("onset", "offset", "fragmentation")
    assert objects["model"].contract.clauses == sorted(trained)
    for clause in CLAUSES:
        assert (f"train/contract/{clause}" in metrics) == (clause in trained), clause
        assert (f"val/soft/{clause}" in metrics) == (clause in trained), clause
        assert f"val/guard/typed/{clause}" in metrics
    every = [f"loss.contract.weights.{c}=1.0" for c in CLAUSES]
    metrics, _ = train(compose_config("train", [*base, "model=contract_aware", "debug=fdr",
                                                *every]))
    for clause in CLAUSES:
        assert f"train/contract/{clause}" in metrics and f"val/soft/{clause}" in metrics
    assert 0.0 <= metrics["val/soft/silence"] <= 1.0


def test_sound_semantics_union_traces_and_gradient_balancing_train(base):
    cfg = compose_config("train", [*base, "model=contract_aware", "debug=fdr",
                                   "loss.contract.semantics=sound",
                                   "loss.contract.modes=[typed,union]",
                                   "loss.contract.balance=true"])
    metrics, objects = train(cfg)
    assert objects["model"].contract.relaxation.modes == ("typed", "union")
    weight = metrics["train/contract/weight"]  # λ × |∇BCE| / |∇contract| on the logits
    assert weight > 0 and weight != 1.0
    assert all(0.0 <= metrics[f"val/soft/{c}"] <= 1.0 for c in ("onset", "fragmentation"))


def test_a_users_own_contract_is_trained_through_config(base, tmp_path):
    path = tmp_path / "gate.contract"
    path.write_text("let eps = 100ms\n"
                    "clause covered: each ref require count(pred overlapping ref) >= 1\n"
                    "clause quiet: on !N[eps] ref.active require !pred.active\n"
                    "diagnostic early: on ref.onset require !P[eps] pred.active\n")
    cfg = compose_config("train", [*base, "model=contract_aware", "debug=fdr",
                                   f"contract.contract={path}", "~loss.contract.weights",
                                   "+loss.contract.weights={covered: 1.0, quiet: 0.5}"])
    metrics, objects = train(cfg)
    module = objects["model"]
    assert module.contract.relaxation.weights == {"covered": 1.0, "quiet": 0.5}
    assert {"train/contract/covered", "train/contract/quiet"} <= set(metrics)
    assert "train/contract/onset" not in metrics
    assert set(module.report.vector("typed")) == {"covered", "quiet"}
    bad = compose_config("train", [*base, "model=contract_aware", "debug=fdr",
                                   f"contract.contract={path}"])  # the shipped names
    with pytest.raises(SedContractError, match=r"no clause 'duration'.*clauses are covered.*"
                                               r"weights=null"):
        train(bad)
    every = compose_config("train", [*base, "model=contract_aware", "debug=fdr",
                                     f"contract.contract={path}",
                                     "loss.contract.weights=null"])
    assert train(every)[1]["model"].contract.relaxation.weights == {"covered": 1.0,
                                                                     "quiet": 1.0}


def test_fine_tuning_loads_a_trained_run_and_refuses_a_mismatched_one(base, tmp_path):
    first = compose_config("train", [*base, "model=dilated_cnn",
                                     f"paths.output_dir={tmp_path / 'dilated'}"])
    train(first)
    source = tmp_path / "dilated" / "checkpoints" / "last.ckpt"
    trained = torch.load(source, weights_only=True)["state_dict"]
    GlobalHydra.instance().clear()
    cfg = compose_config("train", [*base, "model=contract_aware", "debug=fdr",
                                   f"model.init_from={source}", "model.optimizer.lr=0.0",
                                   f"paths.output_dir={tmp_path / 'tuned'}"])
    fresh = instantiate(cfg.model.net, features=64, classes=3)
    _, objects = train(cfg)
    tuned = objects["model"]
    for name, param in tuned.named_parameters():  # lr 0: still the loaded weights
        if name in trained:
            torch.testing.assert_close(param.detach(), trained[name], msg=name)
    inp = "net.inp.weight"
    assert not torch.equal(fresh.state_dict()["inp.weight"], trained[inp])
    other = compose_config("train", [*base, "model=temporal_cnn",
                                     f"paths.output_dir={tmp_path / 'temporal'}"])
    train(other)
    GlobalHydra.instance().clear()
    refused = compose_config("train", [
        *base, "model=contract_aware", "debug=fdr",
        f"model.init_from={tmp_path / 'temporal' / 'checkpoints' / 'last.ckpt'}",
        f"paths.output_dir={tmp_path / 'refused'}"])
    with pytest.raises(SedContractError, match="cannot initialise DetectorModule"):
        train(refused)


# ---- training to the contract: targets and Lagrange multipliers ----------------------------

def constrained_batch(seed: int = 0):
    """Random activity logits and references on 3 classes × 60 frames (the second clip 45)."""
    gen = torch.Generator().manual_seed(seed)
    activity = torch.zeros(2, 3, 60)
    activity[0, 0, 10:25] = 1.0
    activity[0, 1, 30:50] = 1.0
    activity[1, 2, 5:15] = 1.0
    logits = torch.randn(2, 3, 60, generator=gen).requires_grad_()
    return {"activity": logits}, {"activity": activity, "frames": torch.tensor([60, 45])}


def constrained(targets, **kwargs):
    """The multiplier tests use the smooth relaxation (noisy-or windows, expected events): on
    random logits its satisfactions lie strictly inside (0, 1) with gradients everywhere,
    where the defaults are exact (every reference of the batch is covered; a window of random
    logits holds a whole rise)."""
    smooth = {"events": "expected", "relaxation": {"onset": "noisy_or", "offset": "noisy_or"}}
    return ContractObjective(policy=AuditPolicy(), classes=CLASSES, targets=targets,
                             **{**smooth, **kwargs})


def test_a_multiplier_rises_by_the_shortfall_falls_once_met_and_stays_non_negative():
    out, batch = constrained_batch()
    part = constrained({"onset": 1.0, "missed": 0.0, "silence": 0.0}, dual_lr=0.05).train()
    assert part.constrained == ("missed", "onset", "silence")
    part.multipliers.copy_(torch.tensor([0.5, 0.2, 1e-4]))
    _, logs = part(out, batch)
    sat = {c: float(logs[f"contract/satisfaction/{c}"]) for c in part.constrained}
    for c in part.constrained:
        assert sat[c] == pytest.approx(1 - float(logs[f"contract/{c}"].detach()))
        assert 0 < sat[c] < 1
    assert float(logs["contract/multiplier/onset"]) == pytest.approx(0.2)  # the one used
    part.after_step()
    torch.testing.assert_close(part.multiplier("onset"),
                               torch.tensor(0.2 + 0.05 * (1.0 - sat["onset"])))  # below: up
    torch.testing.assert_close(part.multiplier("missed"),
                               torch.tensor(0.5 - 0.05 * sat["missed"]))  # met: down
    assert float(part.multiplier("silence")) == 0.0  # met by more than μ/dual_lr: clamped
    part.after_step()  # no batch since the last step: nothing moves
    torch.testing.assert_close(part.multiplier("onset"),
                               torch.tensor(0.2 + 0.05 * (1.0 - sat["onset"])))
    before = part.multipliers.clone()
    part.eval()(out, batch)  # validation
    with torch.no_grad():
        part.train()(out, batch)
    part.after_step()
    assert torch.equal(part.multipliers, before)  # only training steps move the multipliers


def test_a_step_of_accumulated_batches_uses_their_mean_satisfaction_in_float64():
    part = constrained({"onset": 1.0}, dual_lr=0.1).double().train()
    sats = []
    for seed in (0, 1):
        out, batch = constrained_batch(seed)
        out = {"activity": out["activity"].detach().double().requires_grad_()}
        _, logs = part(out, batch)
        sats.append(logs["contract/satisfaction/onset"])
    part.after_step()
    assert part.multipliers.dtype == torch.float64
    expected = 0.1 * (1.0 - (sats[0] + sats[1]) / 2)
    assert float(part.multiplier("onset")) == pytest.approx(float(expected), rel=1e-12)


def test_the_multiplier_weights_the_clause_loss_and_its_gradient():
    out, batch = constrained_batch()
    part = constrained({"onset": 0.9}, weights={"missed": 1.0}).train()
    assert part.weights == {"missed": 1.0, "onset": 0.0}  # constrained, not weighted: w = 0
    assert part.clauses == ["missed", "onset"]

    def grad(mu: float) -> torch.Tensor:
        part.multipliers.fill_(mu)
        value, _ = part(out, batch)
        (g,) = torch.autograd.grad(value, out["activity"])
        return g

    onset = part.terms(out, batch)["onset"].loss()
    (g_onset,) = torch.autograd.grad(onset, out["activity"])
    assert g_onset.abs().sum() > 0
    torch.testing.assert_close(grad(3.0) - grad(0.0), 3.0 * g_onset)
    part.multipliers.fill_(3.0)
    value, logs = part(out, batch)
    torch.testing.assert_close(value, logs["contract/missed"] + 3.0 * logs["contract/onset"])
    given = constrained({"onset": 0.9}, weights={"onset": 2.0})  # a given weight is kept
    assert given.weights == {"onset": 2.0}


def test_a_weighted_constrained_clause_enters_with_its_weight_plus_its_multiplier():
    """A constrained clause with a given weight w = 2 and multiplier μ = 0.5 counts
    (w + μ) · loss = 2.5 · loss in the total and its gradient (not μ, w·μ, max(w, μ) or 1 + μ)."""
    out, batch = constrained_batch()
    part = constrained({"onset": 0.9}, weights={"onset": 2.0, "missed": 1.0}).train()
    assert part.weights == {"missed": 1.0, "onset": 2.0}
    part.multipliers.fill_(0.5)
    value, logs = part(out, batch)
    torch.testing.assert_close(value, logs["contract/missed"] + 2.5 * logs["contract/onset"])
    assert float(logs["contract/multiplier/onset"]) == 0.5
    terms = part.terms(out, batch)
    (g_onset,) = torch.autograd.grad(terms["onset"].loss(), out["activity"], retain_graph=True)
    (g_missed,) = torch.autograd.grad(terms["missed"].loss(), out["activity"])
    (g_total,) = torch.autograd.grad(value, out["activity"])
    assert g_onset.abs().sum() > 0
    torch.testing.assert_close(g_total, g_missed + 2.5 * g_onset)


def test_multipliers_are_saved_and_loaded_with_the_detector(tmp_path):
    def detector():
        return module_of(DilatedCNN(16, 3, channels=8, blocks=2),
                         losses={"contract": constrained({"onset": 0.9, "missed": 0.95})})

    source = detector()
    source.contract.multipliers.copy_(torch.tensor([0.25, 1.5]))
    path = save(source, tmp_path / "constrained.ckpt")
    assert [k for k in source.state_dict() if "multipliers" in k] == [
        "losses.contract.multipliers"]  # saved once, under the loss's name
    loaded = detector()
    loaded.load_state_dict(torch.load(path, weights_only=True)["state_dict"])
    assert torch.equal(loaded.contract.multipliers, torch.tensor([0.25, 1.5]))
    assert loaded.double().contract.multipliers.dtype == torch.float64  # moves with the module
    plain = module_of(DilatedCNN(16, 3, channels=8, blocks=2),
                      losses={"contract": constrained(None)})
    assert not any("multipliers" in k for k in plain.state_dict())  # unconstrained: as before


def test_unknown_constrained_clauses_targets_and_dual_rates_are_named():
    for kwargs, fragment in (
            ({"targets": {"onsett": 0.9}}, r"targets names clause 'onsett'.*clauses are onset"),
            ({"targets": {"onset": 1.5}}, r"target of clause 'onset'.*\[0, 1\], got 1\.5"),
            ({"targets": {"missed": True}}, r"target of clause 'missed'"),
            ({"targets": [0.9]}, "must map clause names"),
            ({"targets": {"onset": 0.9}, "dual_lr": -0.1}, "loss.contract.dual_lr must be")):
        with pytest.raises(SedContractError, match=fragment):
            ContractObjective(policy=AuditPolicy(), classes=CLASSES, **kwargs)


def test_training_to_targets_through_config_logs_and_steps_the_multipliers(base):
    cfg = compose_config("train", [*base, "model=contract_aware", "debug=fdr",
                                   "loss.contract.targets={onset: 1.0, missed: 0.95}"])
    metrics, objects = train(cfg)
    part = objects["model"].contract
    assert part.targets == {"missed": 0.95, "onset": 1.0} and part.dual_lr == 0.05
    assert float(part.multiplier("onset")) > 0  # a soft satisfaction is below 1: it rose
    for clause, target in part.targets.items():
        assert metrics[f"train/contract/multiplier/{clause}"] == 0.0  # the step's (initial) μ
        sat = metrics[f"train/contract/satisfaction/{clause}"]
        assert sat == pytest.approx(1 - metrics[f"train/contract/{clause}"], abs=1e-6)
        # one optimizer step, one dual step
        assert float(part.multiplier(clause)) == pytest.approx(max(0.0, 0.05 * (target - sat)),
                                                               abs=1e-6)
    assert "train/contract/multiplier/silence" not in metrics
    one = compose_config("train", [*base, "model=contract_aware",
                                   "+loss.contract.targets.onset=0.9"])
    assert build(one).contract.targets == {"onset": 0.9}


def test_fine_tuning_with_targets_starts_the_multipliers_at_zero(tmp_path):
    config = json.dumps({"model": {"frontend": {"n_mels": 16}}, "hop": 0.02})

    def detector(**kwargs):
        return DetectorModule(DilatedCNN(16, 3, channels=8, blocks=2), LogMel(n_mels=16),
                              policy=AuditPolicy(), classes=list(CLASSES), model_config=config,
                              **kwargs)

    path = save(detector(), tmp_path / "bce.ckpt")  # trained without a contract loss
    tuned = detector(losses={"contract": constrained({"onset": 0.9})}, init_from=str(path))
    tuned.setup("fit")  # the checkpoint lacks the multipliers: they start fresh
    assert torch.equal(tuned.contract.multipliers, torch.zeros(1))


def test_a_run_trained_to_targets_evaluates_with_a_named_model(base, tmp_path):
    """evaluate model=<name> replaces the stored model group only: the stored losses, and so
    the multipliers in the checkpoint, still fit."""
    from sedcontract.evaluation import evaluate
    from tests.helpers.training import for_eval

    cfg = compose_config("train", [*base, "model=contract_aware",
                                   "+trainer.limit_train_batches=1",
                                   "+trainer.limit_val_batches=1",
                                   "loss.contract.targets={onset: 0.9}",
                                   f"paths.output_dir={tmp_path / 'run'}"])
    train(cfg)
    ckpt = tmp_path / "run" / "checkpoints" / "last.ckpt"
    assert ckpt.is_file()
    GlobalHydra.instance().clear()
    eval_cfg = compose_config("eval", for_eval(base, ckpt_path=str(ckpt),
                                               model="contract_aware"))
    _, objects = evaluate(eval_cfg)
    assert objects["model"].contract.multiplier("onset") >= 0.0


def test_targets_from_a_risk_order_constrain_its_high_risk_clauses(tmp_path):
    """The shipped speech gate: missed, false and onset get risk_target; a target given by
    name wins; a risk order naming no clause is refused with its file and line."""
    from importlib.resources import files

    gate = str(files("sedcontract") / "examples" / "speech_gate.yaml")
    part = ContractObjective(policy=AuditPolicy(), classes=CLASSES, risk_order=gate)
    assert part.targets == {"false": 0.95, "missed": 0.95, "onset": 0.95}
    named = ContractObjective(policy=AuditPolicy(), classes=CLASSES, risk_order=gate,
                              risk_target=0.9, targets={"onset": 0.8})
    assert named.targets == {"false": 0.9, "missed": 0.9, "onset": 0.8}
    bad = tmp_path / "order.yaml"
    bad.write_text("order: [missed, leakage_far]\nhigh: 1\n")
    with pytest.raises(SedContractError, match=r"order\.yaml.*(line|row) 1.*'leakage_far'"):
        ContractObjective(policy=AuditPolicy(), classes=CLASSES, risk_order=str(bad))
    with pytest.raises(SedContractError, match=r"risk_target must be"):
        ContractObjective(policy=AuditPolicy(), classes=CLASSES, risk_order=gate,
                          risk_target=1.5)


@pytest.mark.parametrize(("events", "fragmentation"), [("decided", 0.0), ("expected", 1.0)])
def test_the_event_relaxation_is_a_config_option(events, fragmentation):
    """loss.contract.events picks the relaxation of the event clauses: on a perfect
    prediction at logits ±4, decided fragmentation is exact (0), expected saturates (1)."""
    cfg = compose_config("train", ["model=contract_aware", f"loss.contract.events={events}"])
    loss = build(cfg).contract.relaxation
    assert loss.events == events
    ref = torch.zeros(1, 3, 200, dtype=torch.bool)
    ref[..., 50:150] = True
    out = loss(torch.where(ref, 4.0, -4.0), ref, torch.tensor([200]))
    assert out["fragmentation"].item() == pytest.approx(fragmentation, abs=1e-3)
    with pytest.raises(Exception, match="unknown event relaxation 'exact'"):
        build(compose_config("train", ["model=contract_aware", "loss.contract.events=exact"]))
