"""``DetectorModule``: the LightningModule of the learned detectors — log-mel front end, a plain
``nn.Module`` detector, BCE on activity/onset/offset, and validation by the exact contract
monitor (:class:`~sedcontract.lightning.metric.ContractMonitor`) — and ``ThresholdModule``,
its subclass for the fitted threshold detector."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from lightning.pytorch import LightningModule
from torch import nn

from sedcontract.audit import AuditPolicy, GuardReport, ScoreSettings
from sedcontract.errors import SedContractError
from sedcontract.lightning.metric import ContractMonitor
from sedcontract.models.detectors import HEADS, ThresholdDetector
from sedcontract.models.frontend import LogMel
from sedcontract.traces import EventList

log = logging.getLogger(__name__)


class NonFiniteLoss(SedContractError):
    """The training loss became NaN or infinite; the run stops at that step."""


def guard_metrics(report: GuardReport, prefix: str = "val") -> dict[str, float]:
    """Flat ``{key: value}`` of a report for loggers: ``<prefix>/guard/<mode>/<coordinate>``,
    its obligation count, ``<prefix>/logic`` (typed) and ``<prefix>/logic/union``, and the
    standard scores as ``<prefix>/scores/<name>/f1`` (micro) and ``…/f1_macro``."""
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
    return out


class DetectorModule(LightningModule):
    """Trains ``net`` on log-mel features of the contract grid and validates it with the exact
    monitor under ``policy`` (the :class:`AuditPolicy` of the config's ``contract`` group).
    ``classes`` (the class names of the outputs, in order) and ``model_config`` (the JSON of the
    config that built the module) travel in the checkpoints, so ``evaluate`` rebuilds it and
    refuses other data; the policy does not (evaluate takes its own)."""

    score_source = "sigmoid of the activity logits"  # how frame scores are made, for reports

    def __init__(self, net: nn.Module, frontend: LogMel,
                 optimizer: Callable[..., torch.optim.Optimizer] | None = None,
                 scheduler: Callable[..., Any] | None = None, *,
                 policy: AuditPolicy | None = None,
                 loss_weights: Mapping[str, float] | None = None,
                 pos_weight: Mapping[str, float] | None = None,
                 classes: Sequence[str] | None = None, model_config: str | None = None,
                 metric_prefix: str = "val") -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["net", "frontend", "optimizer", "scheduler", "policy",
                                          "metric_prefix"])
        self.net, self.frontend = net, frontend
        self.optimizer, self.scheduler = optimizer, scheduler
        self.policy = policy or AuditPolicy(scores=ScoreSettings())
        self.loss_weights = dict(loss_weights or {"activity": 1.0, "onset": 0.5,
                                                  "offset": 0.5})
        unknown = set(self.loss_weights) - set(HEADS)
        if unknown:
            raise SedContractError(f"unknown loss head(s) {sorted(unknown)}; heads are "
                                   f"{', '.join(HEADS)}")
        self.pos_weight = dict(pos_weight or {})
        self.classes = tuple(classes) if classes is not None else None
        self.norm = self.make_norm(frontend)
        self.monitor: ContractMonitor | None = None
        self.report: GuardReport | None = None
        self.predicted: EventList | None = None  # decided events of the last validation
        self.metric_prefix = metric_prefix  # evaluate logs under the split's name

    def make_norm(self, frontend: LogMel) -> nn.Module:
        """Learned detectors see features normalised by batch statistics."""
        return nn.BatchNorm1d(frontend.mel.n_mels)

    # ---- forward and loss -------------------------------------------------------------
    def features(self, waveform: torch.Tensor) -> torch.Tensor:
        return self.norm(self.frontend(waveform))

    def forward(self, waveform: torch.Tensor) -> dict[str, torch.Tensor]:
        return self.net(self.features(waveform))

    def batch_features(self, batch: Mapping[str, Any]) -> torch.Tensor:
        """The features of a batch (a subclass may look them up instead of computing them)."""
        return self.features(batch["waveform"])

    @property
    def hop(self) -> float:
        """Seconds per output frame: the contract grid's hop the detector was built for."""
        return self.frontend.hop

    def loss(self, out: Mapping[str, torch.Tensor],
             batch: Mapping[str, Any]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Weighted BCE of each head over the valid frames of each clip."""
        t = min(out["activity"].shape[-1], batch["activity"].shape[-1])
        valid = (torch.arange(t, device=self.device)[None, :] < batch["frames"][:, None])
        valid = valid[:, None, :].to(out["activity"].dtype)
        parts = {}
        for head, weight in self.loss_weights.items():
            if weight == 0:
                continue
            pos = self.pos_weight.get(head)
            bce = F.binary_cross_entropy_with_logits(
                out[head][..., :t], batch[head][..., :t], reduction="none",
                pos_weight=None if pos is None else torch.tensor(pos, device=self.device))
            parts[head] = (bce * valid).sum() / (valid.sum() * bce.shape[1]).clamp(min=1)
        total = sum(self.loss_weights[h] * v for h, v in parts.items())
        return total, parts

    def frame_scores(self, features: torch.Tensor,
                     out: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Activity scores the decision policy thresholds: the sigmoid of the logits."""
        return torch.sigmoid(out["activity"])

    # ---- training ---------------------------------------------------------------------
    def training_step(self, batch: Mapping[str, Any], batch_idx: int) -> torch.Tensor | None:
        out = self.net(self.batch_features(batch))
        loss, parts = self.loss(out, batch)
        self.check_finite(loss, batch_idx)
        batch_size = len(batch["id"])
        self.log("train/loss", loss, prog_bar=True, batch_size=batch_size)
        for head, value in parts.items():
            self.log(f"train/loss/{head}", value, batch_size=batch_size)
        return loss

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
        if self.optimizer is None or not params:
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
        refuses data whose classes or grid differ from the detector's or the policy's."""
        datamodule = self.trainer.datamodule
        if self.classes is not None and tuple(datamodule.classes) != self.classes:
            raise SedContractError(f"the detector's outputs are {', '.join(self.classes)}; the "
                                   f"data's classes are {', '.join(datamodule.classes)}")
        if abs(self.hop - datamodule.hop) > 1e-9:
            raise SedContractError(f"the detector's frames are {self.hop:g} s; the "
                                   f"contract grid's hop is {datamodule.hop:g} s")
        for name in ("hop", "projection", "edges"):
            if getattr(datamodule, name) != getattr(self.policy, name):
                raise SedContractError(f"the data's {name} is {getattr(datamodule, name)!r}, "
                                       f"the policy's {getattr(self.policy, name)!r}")
        reference, durations = datamodule.reference(split)
        return ContractMonitor(reference, durations, datamodule.classes, self.policy,
                               source=self.score_source,
                               windows=datamodule.windows(split)).to(self.device)

    def on_validation_start(self) -> None:
        # built afresh for every validation run: the datamodule or split may have changed
        self.monitor = self.make_monitor(self.trainer.datamodule.val_split)

    def on_validation_epoch_start(self) -> None:
        self.monitor.reset()

    def validation_step(self, batch: Mapping[str, Any], batch_idx: int) -> None:
        features = self.batch_features(batch)
        out = self.net(features)
        self.log_validation_loss(out, batch)
        self.monitor.update(self.frame_scores(features, out), batch["id"])
        self.observe_validation(out, batch)

    def observe_validation(self, out: Mapping[str, torch.Tensor],
                           batch: Mapping[str, Any]) -> None:
        """A subclass's look at each validation batch's outputs (none here)."""

    def log_validation_loss(self, out: Mapping[str, torch.Tensor],
                            batch: Mapping[str, Any]) -> None:
        loss, _ = self.loss(out, batch)
        self.log(f"{self.metric_prefix}/loss", loss, batch_size=len(batch["id"]),
                 sync_dist=True)

    def on_validation_epoch_end(self) -> None:
        self.report = self.monitor.compute().report
        self.predicted = self.monitor.predicted()  # this process's clips, for timelines
        self.monitor.reset()
        # identical on every process (the monitor reduced its state); the max of equal values
        # is exactly the value (a mean in float32 need not be)
        self.log_dict(guard_metrics(self.report, self.metric_prefix), sync_dist=True,
                      reduce_fx="max")


class ThresholdModule(DetectorModule):
    """A :class:`ThresholdDetector` has no gradient: it is fitted on ``fit_clips`` training
    clips when fitting starts (raw log-mel, no normalisation), its hysteresis gives 0/1 frame
    scores, and the run stops after one validation."""

    score_source = "fitted hysteresis per class (0/1 scores)"

    def __init__(self, net: ThresholdDetector, frontend: LogMel, *args: Any,
                 fit_clips: int = 256, **kwargs: Any) -> None:
        if not isinstance(net, ThresholdDetector):
            raise SedContractError(f"ThresholdModule fits a ThresholdDetector, got "
                                   f"{type(net).__name__}")
        super().__init__(net, frontend, *args, **kwargs)
        self.fit_clips = fit_clips

    def make_norm(self, frontend: LogMel) -> nn.Module:
        return nn.Identity()

    def frame_scores(self, features: torch.Tensor,
                     out: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return self.net.decide(features).float()

    def on_fit_start(self) -> None:
        if not self.net.fitted:
            self.fit()

    @torch.no_grad()
    def fit(self) -> None:
        """Fit the thresholds on the first ``fit_clips`` clips of the training loader."""
        feats, targets = [], {k: [] for k in ("activity", "onset")}
        clips = 0
        for batch in self.trainer.datamodule.train_dataloader():
            x = self.features(batch["waveform"].to(self.device))
            t = min(x.shape[-1], batch["activity"].shape[-1])
            feats.append(x[..., :t])
            for key in targets:
                targets[key].append(batch[key][..., :t].to(self.device))
            clips += len(batch["id"])
            if clips >= self.fit_clips:
                break
        self.net.fit(torch.cat(feats), torch.cat(targets["activity"]),
                     torch.cat(targets["onset"]))
        log.info("threshold detector fitted on %d training clips", clips)

    def training_step(self, batch: Mapping[str, Any], batch_idx: int) -> None:
        return None  # nothing to learn by gradient

    def on_train_epoch_end(self) -> None:
        self.trainer.should_stop = True  # nothing more to learn after the fit and one validation

    def configure_optimizers(self) -> None:
        return None

    def log_validation_loss(self, out: Mapping[str, torch.Tensor],
                            batch: Mapping[str, Any]) -> None:
        """No loss: the detector is fitted, not trained."""
