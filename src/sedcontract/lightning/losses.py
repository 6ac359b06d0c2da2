"""The training losses a detector is composed with (config group ``loss``): BCE on the frame
targets, and the soft relaxations of the policy's contract. Each is built with the run's
policy and class names, and returns its value with the numbers to log."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from sedcontract.analysis.selection import read_risk_order
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.contracts.soft import ClauseTerms, ContractLoss
from sedcontract.contracts.soft.loss import check_clause_names
from sedcontract.errors import SedContractError
from sedcontract.models.detectors import HEADS
from sedcontract.numbers import is_number

Outputs = Mapping[str, torch.Tensor]
Batch = Mapping[str, Any]


def _non_negative(name: str, value: Any) -> float:
    if not is_number(value) \
            or not math.isfinite(value) or value < 0:
        raise SedContractError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


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


class FrameBCE(nn.Module):
    """Weighted BCE of each head (activity, onset, offset) over the valid frames of each clip;
    onset/offset targets smoothed over ``target_tolerance`` seconds of the policy's grid."""

    validated = True  # also logged as the validation loss
    weight = 1.0

    def __init__(self, *, policy: AuditPolicy, classes: Sequence[str] | None = None,
                 weights: Mapping[str, float] | None = None,
                 pos_weight: Mapping[str, float] | None = None,
                 target_tolerance: float = 0.0) -> None:
        super().__init__()
        self.weights = dict(weights or {"activity": 1.0, "onset": 0.5, "offset": 0.5})
        self.pos_weight = dict(pos_weight or {})
        unknown = (set(self.weights) | set(self.pos_weight)) - set(HEADS)
        if unknown:
            raise SedContractError(f"unknown loss head(s) {sorted(unknown)}; heads are "
                                   f"{', '.join(HEADS)}")
        self.radius = round(_non_negative("loss.bce.target_tolerance", target_tolerance)
                            / policy.hop)

    def forward(self, out: Outputs, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        t = min(out["activity"].shape[-1], batch["activity"].shape[-1])
        device = out["activity"].device
        valid = (torch.arange(t, device=device)[None, :] < batch["frames"][:, None])
        valid = valid[:, None, :].to(out["activity"].dtype)
        parts = {}
        for head, weight in self.weights.items():
            if weight == 0:
                continue
            target = batch[head][..., :t]
            if self.radius and head != "activity":
                target = smooth_boundaries(target, self.radius)
            pos = self.pos_weight.get(head)
            bce = F.binary_cross_entropy_with_logits(
                out[head][..., :t], target, reduction="none",
                pos_weight=None if pos is None else torch.tensor(pos, device=device))
            parts[head] = (bce * valid).sum() / (valid.sum() * bce.shape[1]).clamp(min=1)
        total = sum(self.weights[h] * v for h, v in parts.items())
        return total, {f"loss/{head}": value for head, value in parts.items()}


class ContractObjective(nn.Module):
    """``weight`` (λ) × the weighted soft clause losses of the policy's contract
    (:class:`~sedcontract.contracts.soft.ContractLoss`: ``weights``, ``semantics``,
    ``epsilon``, ``modes``, ``relaxation``, ``events``); with ``balance`` λ is rescaled each
    step so its gradient on the activity logits is as large as the losses' before it.

    ``targets`` (clause → soft satisfaction in [0, 1]) trains those clauses to the contract:
    each has a Lagrange multiplier μ ≥ 0 (the buffer ``multipliers``, in the order of
    ``constrained``; saved in checkpoints) and enters the sum as ``(w + μ) · loss``, ``w`` its
    weight in ``weights`` (0 when ``weights`` does not name it). After each optimizer step
    (:meth:`after_step`, which the module calls) ``μ ← max(0, μ + dual_lr · (target −
    satisfaction))``, the satisfaction ``1 − loss`` of the step's training batches (their
    mean under gradient accumulation, across processes too). ``risk_order`` (a YAML risk order,
    :func:`~sedcontract.analysis.selection.read_risk_order`, whose kinds are clause names) gives
    each of its high-risk clauses the target ``risk_target`` unless ``targets`` names it."""

    validated = False  # its validation numbers are the soft clause metric's

    def __init__(self, *, policy: AuditPolicy, classes: Sequence[str] | None = None,
                 weight: float = 1.0, balance: bool = False,
                 weights: Mapping[str, float] | None = None, semantics: str = "product",
                 epsilon: float = 0.1, modes: Sequence[str] = ("typed",),
                 relaxation: Mapping[str, str] | None = None, events: str = "expected",
                 targets: Mapping[str, float] | None = None, dual_lr: float = 0.05,
                 risk_order: str | None = None, risk_target: float = 0.95) -> None:
        super().__init__()
        self.weight = _non_negative("loss.contract.weight", weight)
        self.balance = bool(balance)
        self.dual_lr = _non_negative("loss.contract.dual_lr", dual_lr)
        targets = self._targets(policy, targets)
        if risk_order is not None:
            if not is_number(risk_target) \
                    or not 0 <= risk_target <= 1:
                raise SedContractError(f"loss.contract.risk_target must be a soft satisfaction "
                                       f"in [0, 1], got {risk_target!r}")
            order = read_risk_order(risk_order, [c.name for c in policy.parsed.clauses])
            targets = {**{k: float(risk_target) for k in order.order if k in order.high},
                       **targets}
        relax = {"semantics": semantics, "epsilon": epsilon, "modes": tuple(modes),
                 "relaxation": relaxation, "events": events}
        self.relaxation = self._relaxation(policy, classes, weights, relax)
        self.weights = dict(self.relaxation.weights)  # the fixed weights w
        if set(targets) - set(self.weights):  # a constrained clause of weight 0 is computed
            computed = {**self.weights, **{n: 1.0 for n in targets if n not in self.weights}}
            self.relaxation = self._relaxation(policy, classes, computed, relax)
            self.weights.update({n: 0.0 for n in targets if n not in self.weights})
        self.constrained = tuple(sorted(targets))
        self.targets = {n: targets[n] for n in self.constrained}
        if self.constrained:  # absent otherwise: checkpoints of unconstrained runs are as before
            self.register_buffer("multipliers", torch.zeros(len(self.constrained)))
        self._pending: list[torch.Tensor] = []  # satisfactions since the last optimizer step

    @staticmethod
    def _targets(policy: AuditPolicy, targets: Mapping[str, float] | None) -> dict[str, float]:
        if targets is None:
            return {}
        check_clause_names(policy, targets, "loss.contract.targets",
                           "a soft satisfaction in [0, 1]")
        out = {}
        for name, target in targets.items():
            if not is_number(target) \
                    or not 0 <= target <= 1:
                raise SedContractError(f"the target of clause {name!r} "
                                       f"(loss.contract.targets.{name}) must be a soft "
                                       f"satisfaction in [0, 1], got {target!r}")
            out[name] = float(target)
        return out

    @staticmethod
    def _relaxation(policy: AuditPolicy, classes: Sequence[str] | None,
                    weights: Mapping[str, float] | None,
                    relax: Mapping[str, Any]) -> ContractLoss:
        try:
            # without class names (a bare build), class-indexed atoms are refused by name
            return ContractLoss(policy, tuple(classes or ()), weights, **relax)
        except SedContractError as exc:
            if "no clause" not in str(exc):
                raise
            raise SedContractError(
                f"{exc}. With another contract, loss.contract.weights=null trains each of its "
                "guard coordinates with weight 1; or replace the mapping: "
                "~loss.contract.weights '+loss.contract.weights={name: 1.0}'") from None

    @property
    def clauses(self) -> list[str]:
        return sorted(self.relaxation.weights)

    def multiplier(self, name: str) -> torch.Tensor | None:
        """The current multiplier μ of a constrained clause (a 0-d view); None otherwise."""
        if name not in self.constrained:
            return None
        return self.multipliers[self.constrained.index(name)]

    def terms(self, out: Outputs, batch: Batch) -> dict[str, ClauseTerms]:
        """Soft violations and obligations of each weighted clause on one batch."""
        t = min(out["activity"].shape[-1], batch["activity"].shape[-1])
        return self.relaxation.terms(out["activity"][..., :t], batch["activity"][..., :t] > 0.5,
                                     batch["frames"].clamp(max=t))

    def forward(self, out: Outputs, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        clauses = {n: term.loss() for n, term in self.terms(out, batch).items()}
        logs = {f"contract/{name}": value for name, value in clauses.items()}
        weights: dict[str, Any] = dict(self.weights)
        if self.constrained:
            mu = self.multipliers.detach()
            satisfaction = torch.stack([1 - clauses[n].detach().to(mu.dtype)
                                        for n in self.constrained])
            for i, name in enumerate(self.constrained):
                weights[name] = weights[name] + mu[i].to(clauses[name].dtype)
                logs[f"contract/multiplier/{name}"] = mu[i].clone()
                logs[f"contract/satisfaction/{name}"] = satisfaction[i]
            if self.training and torch.is_grad_enabled():
                self._pending.append(satisfaction)
        total = sum((weights[n] * v for n, v in clauses.items()),
                    torch.zeros((), device=out["activity"].device))
        return total, logs

    @torch.no_grad()
    def after_step(self) -> None:
        """One dual step on the multipliers, from the satisfactions of the training batches
        since the last step (averaged over them and over the processes)."""
        if not self.constrained or not self._pending:
            self._pending.clear()
            return
        satisfaction = torch.stack(self._pending).mean(0).to(self.multipliers)
        self._pending.clear()
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            torch.distributed.all_reduce(satisfaction)
            satisfaction /= torch.distributed.get_world_size()
        targets = torch.tensor([self.targets[n] for n in self.constrained],
                               dtype=self.multipliers.dtype, device=self.multipliers.device)
        self.multipliers.copy_((self.multipliers + self.dual_lr * (targets - satisfaction))
                               .clamp(min=0))
