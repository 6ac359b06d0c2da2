"""``DetectorModule``: one LightningModule for every detector — log-mel front end, a plain
``nn.Module`` detector, BCE on activity/onset/offset, and validation by the exact contract
monitor (:class:`~sedcontract.models.metric.ContractMonitor`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from lightning.pytorch import LightningModule
from torch import nn

from sedcontract.audit import GuardReport, ScoreSettings
from sedcontract.errors import SedContractError
from sedcontract.models.detectors import HEADS, ThresholdDetector
from sedcontract.models.frontend import LogMel
from sedcontract.models.metric import ContractMonitor
from sedcontract.traces.scores import DecisionPolicy

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
    monitor. A :class:`ThresholdDetector` has no gradient: it is fitted on the training split
    when fitting starts and the run stops after one validation. ``classes`` (the class names
    of the outputs, in order) and ``model_config`` (the JSON of the config that built the
    module) travel in the checkpoints, so ``evaluate`` rebuilds it and refuses other data."""

    def __init__(self, net: nn.Module, frontend: LogMel,
                 optimizer: Callable[..., torch.optim.Optimizer] | None = None,
                 scheduler: Callable[..., Any] | None = None, *,
                 loss_weights: Mapping[str, float] | None = None,
                 pos_weight: Mapping[str, float] | None = None,
                 contract: Mapping[str, Any] | None = None,
                 decision: Mapping[str, float] | None = None,
                 scores: Mapping[str, Any] | None = None,
                 fit_clips: int = 256, classes: Sequence[str] | None = None,
                 model_config: str | None = None) -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["net", "frontend", "optimizer", "scheduler"])
        self.net, self.frontend = net, frontend
        self.optimizer, self.scheduler = optimizer, scheduler
        self.loss_weights = dict(loss_weights or {"activity": 1.0, "onset": 0.5,
                                                  "offset": 0.5})
        unknown = set(self.loss_weights) - set(HEADS)
        if unknown:
            raise SedContractError(f"unknown loss head(s) {sorted(unknown)}; heads are "
                                   f"{', '.join(HEADS)}")
        self.pos_weight = dict(pos_weight or {})
        self.contract = dict(contract or {})
        self.decision = DecisionPolicy(**dict(decision or {}))
        self.score_settings = ScoreSettings(**dict(scores or {}))
        self.fit_only = isinstance(net, ThresholdDetector)
        self.fit_clips = fit_clips
        self.classes = tuple(classes) if classes is not None else None
        # learned detectors see normalised features; the threshold detector raw log-mel
        self.norm = nn.Identity() if self.fit_only else nn.BatchNorm1d(frontend.mel.n_mels)
        self.monitor: ContractMonitor | None = None
        self.report: GuardReport | None = None
        self.metric_prefix = "val"  # evaluate logs under the split's name instead

    # ---- forward and loss -------------------------------------------------------------
    def features(self, waveform: torch.Tensor) -> torch.Tensor:
        return self.norm(self.frontend(waveform))

    def forward(self, waveform: torch.Tensor) -> dict[str, torch.Tensor]:
        return self.net(self.features(waveform))

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
        """Activity scores the decision policy thresholds: sigmoid of the logits, or the
        fitted hysteresis (0/1) for the threshold detector."""
        if self.fit_only:
            return self.net.decide(features).float()
        return torch.sigmoid(out["activity"])

    # ---- training ---------------------------------------------------------------------
    def on_fit_start(self) -> None:
        if self.fit_only and not self.net.fitted:
            self._fit_threshold()

    @torch.no_grad()
    def _fit_threshold(self) -> None:
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

    def training_step(self, batch: Mapping[str, Any], batch_idx: int) -> torch.Tensor | None:
        if self.fit_only:
            return None
        out = self(batch["waveform"])
        loss, parts = self.loss(out, batch)
        finite = bool(torch.isfinite(loss.detach()))
        # every process stops together (one would otherwise wait in the gradient all-reduce)
        if not self.trainer.strategy.reduce_boolean_decision(finite, all=True):
            value = loss.item() if not finite else "finite here, not on another process"
            raise NonFiniteLoss(f"the training loss is {value} at global step "
                                f"{self.global_step} (epoch {self.current_epoch}, batch "
                                f"{batch_idx}); lower model.optimizer.lr or check the inputs")
        batch_size = len(batch["id"])
        self.log("train/loss", loss, prog_bar=True, batch_size=batch_size)
        for head, value in parts.items():
            self.log(f"train/loss/{head}", value, batch_size=batch_size)
        return loss

    def on_train_epoch_end(self) -> None:
        if self.fit_only:  # nothing more to learn after the fit and one validation
            self.trainer.should_stop = True

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
        """A monitor for ``split`` of the trainer's datamodule, under this module's contract,
        decision policy and score settings; refuses data whose classes or hop differ from the
        detector's."""
        datamodule = self.trainer.datamodule
        if self.classes is not None and tuple(datamodule.classes) != self.classes:
            raise SedContractError(f"the detector's outputs are {', '.join(self.classes)}; the "
                                   f"data's classes are {', '.join(datamodule.classes)}")
        if abs(self.frontend.hop - datamodule.hop) > 1e-9:
            raise SedContractError(f"the detector's frames are {self.frontend.hop:g} s; the "
                                   f"contract grid's hop is {datamodule.hop:g} s")
        reference, durations = datamodule.reference(split)
        source = "fitted hysteresis per class (0/1 scores)" if self.fit_only else \
            "sigmoid of the activity logits"
        return ContractMonitor(reference, durations, datamodule.classes, hop=datamodule.hop,
                               projection=datamodule.projection, edges=datamodule.edges,
                               decision=self.decision, scores=self.score_settings,
                               source=source, **self.contract).to(self.device)

    def on_validation_start(self) -> None:
        # built afresh for every validation run: the datamodule or split may have changed
        self.monitor = self.make_monitor(self.trainer.datamodule.val_split)

    def on_validation_epoch_start(self) -> None:
        self.monitor.reset()

    def validation_step(self, batch: Mapping[str, Any], batch_idx: int) -> None:
        features = self.features(batch["waveform"])
        out = self.net(features)
        batch_size = len(batch["id"])
        if not self.fit_only:
            loss, _ = self.loss(out, batch)
            self.log(f"{self.metric_prefix}/loss", loss, batch_size=batch_size, sync_dist=True)
        self.monitor.update(self.frame_scores(features, out), batch["id"])

    def on_validation_epoch_end(self) -> None:
        self.report = self.monitor.compute().report
        self.monitor.reset()
        # identical on every process (the monitor reduced its state); the max of equal values
        # is exactly the value (a mean in float32 need not be)
        self.log_dict(guard_metrics(self.report, self.metric_prefix), sync_dist=True,
                      reduce_fx="max")
