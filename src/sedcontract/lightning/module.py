"""``DetectorModule``: one LightningModule composed of parts — a front end (log-mel on the
contract grid, or a frozen encoder's cached features), a plain ``nn.Module`` network, the
losses (frame BCE, the contract's soft relaxations), a training-batch transform
(augmentation, feature masks) — validated by the exact contract monitor
(:class:`~sedcontract.lightning.metric.ContractMonitor`) beside the soft relaxation's numbers.
Every part is built with the run's one policy; no subclass of the training loop."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch
from lightning.pytorch import LightningModule
from torch import nn

from sedcontract.analysis.curve_summaries import curve_summary
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, GuardReport
from sedcontract.guard.curves import GuardCurves, check_curves
from sedcontract.lightning.checkpoints import init_weights
from sedcontract.lightning.losses import ContractObjective
from sedcontract.lightning.metric import ContractMonitor, SoftClauseMetric
from sedcontract.lightning.transforms import Perturb
from sedcontract.numbers import is_number
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.grid import SECONDS_PER_HOUR

log = logging.getLogger(__name__)


class NonFiniteLoss(SedContractError):
    """The training loss became NaN or infinite; the run stops at that step."""


def guard_metrics(report: GuardReport, prefix: str = "val") -> dict[str, float]:
    """Flat ``{key: value}`` of a report for loggers: ``<prefix>/guard/<mode>/<coordinate>``,
    its obligation count, ``<prefix>/logic`` (typed) and ``<prefix>/logic/union``, the
    standard scores as ``<prefix>/scores/<name>/f1`` (micro) and ``…/f1_macro``, and the
    segment-based ``<prefix>/scores/mauc`` and ``…/mpauc`` when the report has them."""
    out: dict[str, float] = {}
    for mode in report.modes:
        for name, value in report.vector(mode).items():
            out[f"{prefix}/guard/{mode}/{name}"] = value
            out[f"{prefix}/obligations/{mode}/{name}"] = float(
                report.modes[mode].micro(name).obligations)
    if "typed" in report.modes:
        out[f"{prefix}/logic"] = report.logic("typed")
    if "union" in report.modes:
        out[f"{prefix}/logic/union"] = report.logic("union")
    for name, result in (report.scores or {}).items():
        out[f"{prefix}/scores/{name}/f1"] = result.overall.f1
        out[f"{prefix}/scores/{name}/f1_macro"] = result.macro("f1")[0]
    if report.auroc is not None:
        out[f"{prefix}/scores/mauc"] = report.auroc["mauc"]
        out[f"{prefix}/scores/mpauc"] = report.auroc["mpauc"]
    return out


def curve_metrics(curves: GuardCurves, hours: float, max_rate: float = 100.0,
                  prefix: str = "val") -> dict[str, float]:
    """Flat ``{key: value}`` of the curves' areas up to ``max_rate`` false events per hour of
    ``hours`` of audio (:func:`~sedcontract.analysis.curve_summaries.curve_summary`):
    ``<prefix>/curves/<coordinate>``, the union trace's area, and
    ``<prefix>/curves/typed/<coordinate>``, the plain mean over classes of the areas that are
    not NaN (every class weighs the same). NaN when no area is defined (vacuous at every
    budget), as :func:`guard_metrics` logs a vacuous coordinate."""
    out: dict[str, float] = {}
    for name, by_class in curve_summary(curves, hours, max_rate)["areas"].items():
        out[f"{prefix}/curves/{name}"] = float(by_class["*"])
        typed = [by_class[c] for c in curves.classes if not math.isnan(by_class[c])]
        out[f"{prefix}/curves/typed/{name}"] = float(np.mean(typed)) if typed else math.nan
    return out


def check_validation_curves(policy: AuditPolicy, max_rate: float) -> None:
    """Refuse validation curves (``curves=true``) under a policy they are not exact for, or a
    budget that is no positive number, naming the setting."""
    if not is_number(max_rate) or \
            not 0 < max_rate < math.inf:
        raise SedContractError(f"curves_max_rate must be a positive number of false events per "
                               f"hour, got {max_rate!r}")
    try:
        check_curves(policy, policy.decision or DecisionPolicy())
    except SedContractError as exc:
        raise SedContractError(f"validation curves (curves=true): "
                               f"{getattr(exc, 'message', str(exc))}; or train with "
                               "curves=false") from None


class DetectorModule(LightningModule):
    """``frontend`` → (``norm``: batch-normalised features) → ``net`` → heads, trained with the
    sum of ``losses`` (name → part; each weighted by its ``weight``) on batches the
    ``augment`` part transforms, validated by the exact monitor under ``policy``.

    Parts may declare: the front end ``batch_features(batch)``, ``prepare(clips, device,
    name)`` (a feature cache) and ``score_source``; the network ``frame_scores(features,
    out)`` (default: the sigmoid of the activity logits), ``fitted``/``fit`` with
    ``fit_clips`` (a detector fitted, not trained: it validates once and stops) and
    ``fresh`` (tensors ``init_from`` may lack). ``classes`` and ``model_config`` travel in the
    checkpoints, so ``evaluate`` rebuilds the module and refuses other data. With ``curves``,
    validation also logs the threshold-free areas of :func:`curve_metrics` (up to
    ``curves_max_rate`` false events per hour); a policy the curves are not exact for is
    refused here."""

    def __init__(self, net: nn.Module, frontend: nn.Module, *, policy: AuditPolicy,
                 losses: Mapping[str, nn.Module] | None = None, augment: Perturb | None = None,
                 norm: bool = True,
                 optimizer: Callable[..., torch.optim.Optimizer] | None = None,
                 scheduler: Callable[..., Any] | None = None,
                 classes: Sequence[str] | None = None, model_config: str | None = None,
                 init_from: str | None = None, metric_prefix: str = "val",
                 curves: bool = False, curves_max_rate: float = 100.0) -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["net", "frontend", "optimizer", "scheduler", "policy",
                                          "losses", "augment", "metric_prefix", "curves",
                                          "curves_max_rate"])
        if not isinstance(policy, AuditPolicy):
            raise SedContractError(f"a detector takes the run's AuditPolicy, got "
                                   f"{type(policy).__name__}")
        self.curves, self.curves_max_rate = bool(curves), curves_max_rate
        if self.curves:
            check_validation_curves(policy, curves_max_rate)
        if abs(frontend.hop - policy.hop) > 1e-9:
            raise SedContractError(f"the front end's frames are {frontend.hop:g} s; the "
                                   f"contract grid's hop is {policy.hop:g} s")
        self.net, self.frontend, self.policy = net, frontend, policy
        self.losses = nn.ModuleDict(dict(losses or {}))
        self.augment = augment
        self.norm = nn.BatchNorm1d(frontend.dim) if norm else nn.Identity()
        self.optimizer, self.scheduler = optimizer, scheduler
        self.classes = tuple(classes) if classes is not None else None
        self.init_from = init_from
        self.score_source = getattr(net, "score_source", None) or getattr(
            frontend, "score_source", "sigmoid of the activity logits")
        self.monitor: ContractMonitor | None = None
        self.soft: SoftClauseMetric | None = None
        self.report: GuardReport | None = None
        self.predicted: EventList | None = None  # decided events of the last validation
        self.scores_seen: dict[str, Any] = {}     # its frame scores, when the monitor keeps them
        self.metric_prefix = metric_prefix  # evaluate logs under the split's name
        self._prepared: set[str] = set()  # splits whose front end is prepared

    @property
    def contract(self) -> ContractObjective | None:
        """The contract loss among the losses (not a submodule of its own: its multipliers
        are saved once, under ``losses.<name>.``)."""
        return next((part for part in self.losses.values()
                     if isinstance(part, ContractObjective)), None)

    @property
    def fitted_not_trained(self) -> bool:
        """A network fitted on training data instead of trained by gradient."""
        return hasattr(self.net, "fitted") and hasattr(self.net, "fit")

    @property
    def hop(self) -> float:
        """Seconds per output frame: the policy's grid."""
        return self.policy.hop

    # ---- forward ----------------------------------------------------------------------
    def features(self, waveform: torch.Tensor) -> torch.Tensor:
        return self.norm(self.frontend(waveform))

    def forward(self, waveform: torch.Tensor) -> dict[str, torch.Tensor]:
        return self.net(self.features(waveform))

    def batch_features(self, batch: Mapping[str, Any]) -> torch.Tensor:
        """A batch's features: the front end's (a probe's from its cache), computed afresh for
        an augmented batch (its clips are new: a cache would only grow)."""
        if batch.get("augmented"):
            return self.features(batch["waveform"])
        return self.norm(self.frontend.batch_features(batch))

    def frame_scores(self, features: torch.Tensor,
                     out: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Activity scores the decision policy thresholds."""
        own = getattr(self.net, "frame_scores", None)
        return own(features, out) if own is not None else torch.sigmoid(out["activity"])

    def loss(self, out: Mapping[str, torch.Tensor], batch: Mapping[str, Any], *,
             validated: bool = False) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The weighted sum of the losses (``validated``: only those logged in validation) and
        what to log: each loss's value and its parts."""
        logs: dict[str, torch.Tensor] = {}
        total = torch.zeros((), device=out["activity"].device)
        for name, part in self.losses.items():
            if validated and not part.validated:
                continue
            value, parts = part(out, batch)
            weight = part.weight
            if hasattr(part, "balance"):  # a weighted auxiliary loss: log its weight
                if part.balance and value.requires_grad and total.requires_grad:
                    weight = weight * self._balance(total, value, out["activity"])
                logs[f"{name}/weight"] = torch.tensor(weight)
            total = total + weight * value
            logs[f"loss/{name}"] = value.detach()
            logs.update({k: v.detach() for k, v in parts.items()})
        return total, logs

    @staticmethod
    def _balance(before: torch.Tensor, value: torch.Tensor, logits: torch.Tensor) -> float:
        """The factor that gives ``value`` the gradient norm on the activity logits of the
        losses ``before`` it."""
        (g_before,) = torch.autograd.grad(before, logits, retain_graph=True, allow_unused=True)
        (g_value,) = torch.autograd.grad(value, logits, retain_graph=True, allow_unused=True)
        if g_before is None or g_value is None or float(g_value.norm()) == 0:
            return 1.0
        return float(g_before.norm() / g_value.norm())

    # ---- training ---------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        if stage == "fit" and self.init_from:
            frontend = None
            if self.hparams.get("model_config"):
                stored = json.loads(self.hparams["model_config"])
                frontend = {**stored["model"].get("frontend", {}), "hop": self.policy.hop}
            fresh = tuple(f"net.{p}" for p in getattr(self.net, "fresh", ()))
            fresh += tuple(f"losses.{name}." for name in self.losses)  # e.g. multipliers
            kept = init_weights(self, self.init_from, fresh=fresh, classes=self.classes,
                                frontend=frontend)
            log.info("initialised from %s (%d tensors kept their initial values: %s)",
                     self.init_from, len(kept), ", ".join(kept[:4]) or "none")

    def prepare_split(self, split: str) -> None:
        """Let the front end prepare a split's clips (a probe encodes them once)."""
        prepare = getattr(self.frontend, "prepare", None)
        if prepare is None or split in self._prepared:
            return
        self._prepared.add(split)
        prepare(self.trainer.datamodule.dataset(split).waveforms(), self.device, split)

    def on_fit_start(self) -> None:
        self.prepare_split(self.trainer.datamodule.train_split)
        if self.fitted_not_trained and not self.net.fitted:
            self.fit_net()

    @torch.no_grad()
    def fit_net(self) -> None:
        """Fit a fitted detector on the first ``fit_clips`` clips of the training loader."""
        feats, targets = [], {k: [] for k in ("activity", "onset")}
        clips = 0
        for batch in self.trainer.datamodule.train_dataloader():
            batch = {k: v.to(self.device) if isinstance(v, torch.Tensor) else v
                     for k, v in batch.items()}
            x = self.batch_features(batch)
            t = min(x.shape[-1], batch["activity"].shape[-1])
            feats.append(x[..., :t])
            for key in targets:
                targets[key].append(batch[key][..., :t])
            clips += len(batch["id"])
            if clips >= self.net.fit_clips:
                break
        self.net.fit(torch.cat(feats), torch.cat(targets["activity"]),
                     torch.cat(targets["onset"]))
        log.info("%s fitted on %d training clips", type(self.net).__name__, clips)

    def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        """Training batches are transformed on the CPU; boundary targets follow the activity."""
        if self.augment is None or self.trainer is None or not self.trainer.training:
            return batch
        return self.augment.batch(batch, hop=self.hop,
                                  sample_rate=self.trainer.datamodule.sample_rate,
                                  seed=[torch.initial_seed() % 2**32, self.global_step])

    def training_step(self, batch: Mapping[str, Any], batch_idx: int) -> torch.Tensor | None:
        if self.fitted_not_trained:
            return None  # nothing to learn by gradient
        features = self.batch_features(batch)
        if self.augment is not None:
            features = self.augment.features(features)
        out = self.net(features)
        loss, logs = self.loss(out, batch)
        self.check_finite(loss, batch_idx)
        batch_size = len(batch["id"])
        self.log("train/loss", loss, prog_bar=True, batch_size=batch_size)
        for key, value in logs.items():
            self.log(f"train/{key}", value, batch_size=batch_size)
        return loss

    def on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
        """Parts with a state of their own (a contract's multipliers) step once per
        optimizer step."""
        for part in self.losses.values():
            if hasattr(part, "after_step"):
                part.after_step()

    def on_train_epoch_end(self) -> None:
        if self.fitted_not_trained:
            self.trainer.should_stop = True  # nothing more to learn after the fit

    def check_finite(self, loss: torch.Tensor, batch_idx: int) -> None:
        """Stop with a clear error when the loss is NaN or infinite on any process (every
        process stops together; one would otherwise wait in the gradient all-reduce)."""
        finite = bool(torch.isfinite(loss.detach()))
        if not self.trainer.strategy.reduce_boolean_decision(finite, all=True):
            value = loss.item() if not finite else "finite here, not on another process"
            raise NonFiniteLoss(f"the training loss is {value} at global step "
                                f"{self.global_step} (epoch {self.current_epoch}, batch "
                                f"{batch_idx}); lower model.optimizer.lr or check the inputs")

    def configure_optimizers(self) -> Any:
        params = [p for p in self.parameters() if p.requires_grad]
        if self.optimizer is None or not params or self.fitted_not_trained:
            return None
        optimizer = self.optimizer(params=params)
        if self.scheduler is None:
            return optimizer
        return {"optimizer": optimizer,
                "lr_scheduler": {"scheduler": self.scheduler(optimizer=optimizer),
                                 "interval": "epoch"}}

    # ---- validation with the exact monitor --------------------------------------------
    def make_monitor(self, split: str) -> ContractMonitor:
        """A monitor for ``split`` of the trainer's datamodule under this module's policy;
        refuses data whose classes differ from the detector's outputs."""
        datamodule = self.trainer.datamodule
        if self.classes is not None and tuple(datamodule.classes) != self.classes:
            raise SedContractError(f"the detector's outputs are {', '.join(self.classes)}; the "
                                   f"data's classes are {', '.join(datamodule.classes)}")
        reference, durations = datamodule.reference(split)
        return ContractMonitor(reference, durations, datamodule.classes, self.policy,
                               source=self.score_source, windows=datamodule.windows(split),
                               curves=self.curves).to(self.device)

    def on_validation_start(self) -> None:
        split = self.trainer.datamodule.val_split
        self.prepare_split(split)
        # built afresh for every validation run: the datamodule or split may have changed
        self.monitor = self.make_monitor(split)
        if self.contract is not None:
            self.soft = SoftClauseMetric(self.contract.clauses).to(self.device)

    def on_validation_epoch_start(self) -> None:
        self.monitor.reset()
        if self.soft is not None:
            self.soft.reset()

    def validation_step(self, batch: Mapping[str, Any], batch_idx: int) -> None:
        features = self.batch_features(batch)
        out = self.net(features)
        if not self.fitted_not_trained and self.losses:
            loss, _ = self.loss(out, batch, validated=True)
            self.log(f"{self.metric_prefix}/loss", loss, batch_size=len(batch["id"]),
                     sync_dist=True)
        self.monitor.update(self.frame_scores(features, out), batch["id"])
        if self.soft is not None:
            self.soft.update(self.contract.terms(out, batch))

    def on_validation_epoch_end(self) -> None:
        audited = self.monitor.compute()  # the AUROC of the frame scores joins the report
        self.report = replace(audited.report, auroc=audited.auroc)
        self.predicted = self.monitor.predicted()  # this process's clips, for timelines
        # kept frame scores for score files (empty unless asked; those kept for curves go)
        self.scores_seen = self.monitor.scores_of if self.monitor.keep_scores else {}
        self.monitor.reset()
        metrics = guard_metrics(self.report, self.metric_prefix)
        if audited.curves is not None:
            hours = sum(self.monitor.durations[c] for c in audited.clips) / SECONDS_PER_HOUR
            metrics |= curve_metrics(audited.curves, hours, self.curves_max_rate,
                                     self.metric_prefix)
        # identical on every process (the monitor reduced its state and joined the curves);
        # the max of equal values is exactly the value (a mean in float32 need not be)
        self.log_dict(metrics, sync_dist=True, reduce_fx="max")
        if self.soft is None:
            return
        soft = self.soft.compute()
        self.soft.reset()
        self.log_dict({f"{self.metric_prefix}/soft/{n}": v for n, v in soft.items()},
                      sync_dist=False)
        if not self.trainer.sanity_checking:
            exact = self.report.vector("typed") if "typed" in self.report.modes else {}
            log.info("soft relaxation beside the exact monitor (%s): %s", self.metric_prefix,
                     ", ".join(f"{n} {v:.3f} (exact {exact.get(n, math.nan):.3f})"
                               for n, v in soft.items()))
