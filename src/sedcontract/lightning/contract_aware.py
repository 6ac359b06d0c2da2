"""``ContractAwareModule``: a detector trained with BCE plus the soft relaxations of the
policy's contract (:class:`~sedcontract.contracts.soft.ContractLoss`), validated by the exact
monitor of the same contract. Each clause's soft loss is logged every step
(``train/contract/<clause>``) and, in validation, its soft satisfaction
(``val/soft/<clause>``) beside the exact coordinate (``val/guard/<mode>/<clause>``)."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

import numpy as np
import torch
from torch import nn

from sedcontract.contracts.soft import ClauseTerms, ContractLoss
from sedcontract.data.augment import Augmentation
from sedcontract.errors import SedContractError
from sedcontract.lightning.checkpoints import init_weights
from sedcontract.lightning.module import DetectorModule
from sedcontract.models.frontend import LogMel
from sedcontract.traces.activity import offset, onset

log = logging.getLogger(__name__)


def _known(what: str, settings: Mapping[str, Any] | None, names: list[str]) -> None:
    unknown = sorted(set(settings or {}) - set(names))
    if unknown:
        raise SedContractError(f"unknown {what} setting(s) {unknown}; the settings are "
                               f"{', '.join(names)}")


class FeatureMasks(nn.Module):
    """SpecAugment-style masks on normalised features in training: ``time`` bands of up to
    ``time_width`` frames and ``freq`` bands of up to ``freq_width`` bins set to 0 (the mean);
    labels unchanged."""

    def __init__(self, time: int = 2, time_width: int = 10, freq: int = 2,
                 freq_width: int = 8) -> None:
        super().__init__()
        for name, value in (("time", time), ("time_width", time_width), ("freq", freq),
                            ("freq_width", freq_width)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SedContractError(f"feature_masks.{name} must be an integer >= 0, got "
                                       f"{value!r}")
        self.time, self.time_width, self.freq, self.freq_width = time, time_width, freq, \
            freq_width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return x
        b, f, t = x.shape
        keep = torch.ones(b, f, t, dtype=torch.bool, device=x.device)
        for count, width, size, axis in ((self.time, self.time_width, t, 2),
                                         (self.freq, self.freq_width, f, 1)):
            for _ in range(count):
                w = torch.randint(0, width + 1, (b,), device=x.device)
                start = (torch.rand(b, device=x.device) * (size - w + 1).clamp(min=1)).long()
                at = torch.arange(size, device=x.device)[None]
                band = (at >= start[:, None]) & (at < (start + w)[:, None])
                keep &= ~(band[:, None, :] if axis == 2 else band[:, :, None])
        return x * keep


def smooth_boundaries(target: torch.Tensor, radius: int) -> torch.Tensor:
    """Onset/offset targets spread over ``±radius`` frames with a triangle (1 at the boundary,
    ``1 − d/(radius+1)`` at distance ``d``): a boundary a frame or two off is partly right."""
    out = target
    for d in range(1, radius + 1):
        weight = 1 - d / (radius + 1)
        for k in (d, -d):
            moved = torch.zeros_like(target)
            if k > 0:
                moved[..., k:] = target[..., :-k]
            else:
                moved[..., :k] = target[..., -k:]
            out = torch.maximum(out, weight * moved)
    return out


class ContractAwareModule(DetectorModule):
    """BCE on activity/onset/offset (boundary targets smoothed over ``target_tolerance``
    seconds) plus ``contract_loss['weight']`` × the weighted soft clause losses.

    ``contract_loss``: ``weights`` (clause → weight; default every guard coordinate 1),
    ``semantics`` (product | sound), ``epsilon``, ``modes``, ``weight`` (λ) and ``balance``
    (scale λ each step so the contract losses' gradient on the activity logits is as large as
    the BCE's). ``augment``: :class:`~sedcontract.data.augment.Augmentation` settings (None:
    off). ``feature_masks``: :class:`FeatureMasks` settings. ``init_from``: a checkpoint whose
    weights start the fine-tuning (the boundary head's refinement may be absent from it).
    """

    def __init__(self, net: nn.Module, frontend: LogMel, *args: Any,
                 contract_loss: Mapping[str, Any] | None = None,
                 augment: Mapping[str, Any] | None = None,
                 feature_masks: Mapping[str, Any] | None = None,
                 target_tolerance: float = 0.06, init_from: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(net, frontend, *args, **kwargs)
        settings = dict(contract_loss or {})
        for name, value in (("contract_loss.weight", settings.get("weight", 1.0)),
                            ("target_tolerance", target_tolerance)):
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or value < 0:
                raise SedContractError(f"{name} must be a number >= 0, got {value!r}")
        self.contract_weight = float(settings.pop("weight", 1.0))
        self.balance = bool(settings.pop("balance", False))
        unknown = sorted(set(settings) - {"weights", "semantics", "epsilon", "modes"})
        if unknown:
            raise SedContractError(f"unknown contract_loss setting(s) {unknown}; the settings "
                                   "are weight, balance, weights, semantics, epsilon, modes")
        try:
            # without class names (a bare build), class-indexed atoms are refused by name
            self.contract_loss = ContractLoss(self.policy, self.classes or (), **settings)
        except SedContractError as exc:
            if "no clause" not in str(exc):
                raise
            raise SedContractError(
                f"{exc}. With another contract, model.contract_loss.weights=null trains each "
                "of its guard coordinates with weight 1; or replace the mapping: "
                "~model.contract_loss.weights '+model.contract_loss.weights={name: 1.0}'"
            ) from None
        self.augmentation = None
        _known("augment", augment, [f.name for f in fields(Augmentation)])
        _known("feature_masks", feature_masks, ["time", "time_width", "freq", "freq_width"])
        if augment:
            augment = dict(augment)
            if "families" in augment:
                augment["families"] = tuple(augment["families"])
            if "background_db" in augment:
                augment["background_db"] = tuple(augment["background_db"])
            self.augmentation = Augmentation(**augment)
        self.feature_masks = FeatureMasks(**feature_masks) if feature_masks else None
        self.radius = round(target_tolerance / self.frontend.hop)
        self.init_from = init_from
        self._soft_sums: dict[str, list[float]] = {}

    # ---- fine-tuning --------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        if stage == "fit" and self.init_from:
            frontend = None
            if self.hparams.get("model_config"):
                frontend = json.loads(self.hparams["model_config"]).get("frontend")
            fresh = tuple(f"net.{p}" for p in getattr(self.net, "fresh", ()))
            kept = init_weights(self, self.init_from, fresh=fresh, classes=self.classes,
                                frontend=frontend)
            log.info("initialised from %s (%d tensors kept their initial values: %s)",
                     self.init_from, len(kept), ", ".join(kept[:4]) or "none")

    # ---- batches ------------------------------------------------------------------------
    def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        """Training batches are augmented on the CPU; boundary targets follow the activity."""
        if self.augmentation is None or self.trainer is None or not self.trainer.training:
            return batch
        rng = np.random.default_rng([torch.initial_seed() % 2**32, self.global_step])
        waveform, activity = self.augmentation(
            batch["waveform"].numpy(), batch["activity"].numpy() > 0.5,
            batch["samples"].numpy(), batch["frames"].numpy(), hop=self.frontend.hop,
            sample_rate=self.frontend.mel.sample_rate, rng=rng)
        lengths = batch["frames"].numpy()[:, None].repeat(activity.shape[1], 1)
        batch = dict(batch)
        batch["waveform"] = torch.from_numpy(waveform)
        batch["activity"] = torch.from_numpy(activity.astype(np.float32))
        for name, derive in (("onset", onset), ("offset", offset)):
            batch[name] = torch.from_numpy(
                derive(activity, self.policy.edges, lengths).astype(np.float32))
        return batch

    def loss(self, out: Mapping[str, torch.Tensor],
             batch: Mapping[str, Any]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        if self.radius:
            batch = {**batch, **{k: smooth_boundaries(batch[k], self.radius)
                                 for k in ("onset", "offset")}}
        return super().loss(out, batch)

    def contract_terms(self, out: Mapping[str, torch.Tensor],
                       batch: Mapping[str, Any]) -> dict[str, ClauseTerms]:
        """Soft violations and obligations of each weighted clause on one batch."""
        t = min(out["activity"].shape[-1], batch["activity"].shape[-1])
        return self.contract_loss.terms(out["activity"][..., :t],
                                        batch["activity"][..., :t] > 0.5,
                                        batch["frames"].clamp(max=t))

    # ---- training -----------------------------------------------------------------------
    def training_step(self, batch: Mapping[str, Any], batch_idx: int) -> torch.Tensor:
        features = self.batch_features(batch)
        if self.feature_masks is not None:
            features = self.feature_masks(features)
        out = self.net(features)
        bce, parts = self.loss(out, batch)
        terms = self.contract_terms(out, batch)
        clauses = {n: term.loss() for n, term in terms.items()}
        contract = sum((self.contract_loss.weights[n] * v for n, v in clauses.items()),
                       torch.zeros((), device=bce.device))
        weight = self.contract_weight
        if self.balance and contract.requires_grad and bce.requires_grad:
            (g_bce,) = torch.autograd.grad(bce, out["activity"], retain_graph=True,
                                           allow_unused=True)
            (g_con,) = torch.autograd.grad(contract, out["activity"], retain_graph=True,
                                           allow_unused=True)
            if g_bce is not None and g_con is not None and float(g_con.norm()) > 0:
                weight = weight * float(g_bce.norm() / g_con.norm())
        loss = bce + weight * contract
        self.check_finite(loss, batch_idx)
        size = len(batch["id"])
        self.log("train/loss", loss, prog_bar=True, batch_size=size)
        self.log("train/loss/bce", bce, batch_size=size)
        self.log("train/loss/contract", contract, batch_size=size)
        self.log("train/contract/weight", weight, batch_size=size)
        for head, value in parts.items():
            self.log(f"train/loss/{head}", value, batch_size=size)
        for name, value in clauses.items():
            self.log(f"train/contract/{name}", value, batch_size=size)
        return loss

    # ---- validation: the relaxation beside the exact monitor ------------------------------
    def on_validation_epoch_start(self) -> None:
        super().on_validation_epoch_start()
        self._soft_sums = {}

    def observe_validation(self, out: Mapping[str, torch.Tensor],
                           batch: Mapping[str, Any]) -> None:
        """Pool each clause's soft violations and obligations over the validation batches."""
        for name, term in self.contract_terms(out, batch).items():
            sums = self._soft_sums.setdefault(name, [0.0, 0.0])
            sums[0] += float(term.violations)
            sums[1] += float(term.obligations)

    def on_validation_epoch_end(self) -> None:
        super().on_validation_epoch_end()
        names = sorted(self._soft_sums)
        sums = torch.tensor([self._soft_sums[n] for n in names], dtype=torch.float64,
                            device=self.device).reshape(len(names), 2)
        if self.trainer.world_size > 1:
            sums = self.all_gather(sums).reshape(-1, len(names), 2).sum(0)
        soft = {n: 1 - float(v / o) for n, (v, o) in zip(names, sums.tolist(), strict=True)
                if o > 0}
        self.log_dict({f"{self.metric_prefix}/soft/{n}": v for n, v in soft.items()},
                      sync_dist=False)
        if self.report is not None and not self.trainer.sanity_checking:
            exact = self.report.vector("typed") if "typed" in self.report.modes else {}
            log.info("soft relaxation beside the exact monitor (%s): %s", self.metric_prefix,
                     ", ".join(f"{n} {v:.3f} (exact {exact.get(n, math.nan):.3f})"
                               for n, v in soft.items()))
