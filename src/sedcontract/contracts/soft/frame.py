"""Frame-sort formulas on soft signals: the exact monitor's tree walk (``evaluate_tree``) over
a soft backend, with atoms from posteriors (or logits) and crisp references, onset and offset
derived under the declared clip-edge policy as the exact monitor derives them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import torch

from sedcontract.contracts.bounds import BoundResolver, Rounding
from sedcontract.contracts.monitor import evaluate_tree
from sedcontract.contracts.parser import parse_formula
from sedcontract.contracts.soft.logic import Bounds, LogPair, ProductOps, SoundOps, safe_log
from sedcontract.contracts.syntax import (
    And,
    Atom,
    Bound,
    Formula,
    Implies,
    Or,
    Temporal,
    Until,
    children,
    postorder,
)
from sedcontract.errors import SignalError
from sedcontract.traces.activity import EDGES
from sedcontract.traces.names import signal_name

SEMANTICS = ("product", "sound")


@dataclass(frozen=True)
class Signal:
    """One ``active`` signal of a batch: crisp (Boolean), a probability, a logit, ``log p`` and
    ``log(1−p)`` stacked (``log_pair``), or (sound semantics) a real robustness value
    (positive = active)."""

    value: torch.Tensor
    kind: str = "probability"  # crisp | probability | logit | log_pair | robustness

    def __post_init__(self) -> None:
        if self.kind not in ("crisp", "probability", "logit", "log_pair", "robustness"):
            raise SignalError(f"unknown signal kind {self.kind!r}")


def smoothing_depth(formula: Formula) -> int:
    """The most smoothing nodes on a root-to-leaf path (``∧ ∨ →`` and windows one each, until
    two): the certified error of the sound semantics is ``depth × node ε``."""
    depth: dict[int, int] = {}
    for node in postorder(formula, children):
        below = max((depth[id(c)] for c in children(node)), default=0)
        own = 2 if isinstance(node, Until) else int(isinstance(node, And | Or | Implies
                                                             | Temporal))
        depth[id(node)] = below + own
    return depth[id(formula)]


class SoftTable:
    """Named soft signals of one ``[rows, frames]`` shape on one backend; onset/offset atoms
    derive from the matching ``active`` signal, frames past a row's length are inactive."""

    def __init__(self, signals: Mapping[str, Signal], ops: ProductOps | SoundOps, *,
                 edges: str = "open") -> None:
        if edges not in EDGES:
            raise SignalError(f"unknown clip-edge policy {edges!r}; choose one of "
                              f"{', '.join(EDGES)}")
        self.signals, self.ops, self.edges = dict(signals), ops, edges
        self.cache: dict[str, Any] = {}    # atom name → value
        self.actives: dict[str, Any] = {}  # active signal → value, cut at each clip's end

    def value(self, signal: Signal) -> LogPair | Bounds:
        ops = self.ops
        x = signal.value
        if signal.kind == "crisp":
            return ops.crisp(x.bool())
        if isinstance(ops, SoundOps):
            if signal.kind != "robustness":
                raise SignalError(f"the sound semantics reads robustness values (positive = "
                                  f"active) or crisp signals, got {signal.kind}")
            return ops.real(x)
        if signal.kind == "log_pair":
            return LogPair(x[0].to(ops.dtype), x[1].to(ops.dtype))
        if signal.kind == "logit":
            z = x.to(ops.dtype)
            return LogPair(torch.nn.functional.logsigmoid(z),
                           torch.nn.functional.logsigmoid(-z))
        if signal.kind == "probability":
            p = x.to(ops.dtype)
            return LogPair(safe_log(p), safe_log(1 - p))
        raise SignalError("product semantics reads probabilities, logits or crisp signals")

    def lookup(self, atom: Atom) -> LogPair | Bounds:
        key = signal_name(atom.side, atom.kind, atom.cls)
        if key in self.cache:
            return self.cache[key]
        active_name = signal_name(atom.side, "active", atom.cls)
        if active_name not in self.signals:
            raise SignalError(f"unknown atom {key!r}; known signals: "
                              f"{', '.join(sorted(self.signals))}")
        active = self.active(active_name)
        value = active if atom.kind == "active" else derive(self.ops, active, atom.kind,
                                                              self.edges)
        self.cache[key] = value
        return value

    def active(self, name: str) -> LogPair | Bounds:
        if name not in self.actives:
            value = self.value(self.signals[name])
            if self.ops.valid is not None:  # nothing is active past a clip's end
                value = self.ops.and_exact(value, self.ops.crisp(self.ops.valid))
            self.actives[name] = value
        return self.actives[name]


def derive(ops: ProductOps | SoundOps, active: Any, kind: str, edges: str) -> Any:
    """Soft ``onset = active ∧ ¬active[t−1]`` and ``offset = ¬active ∧ active[t−1]`` (soft onset
    ``p_t(1−p_{t−1})``), with the clip edges of :mod:`sedcontract.traces.activity`: ``open``
    has no onset on frame 0 and no offset for an event running to the end; ``closed`` puts
    them on the first and the last frame. Product logic also carries the rise of the activity
    (``LogPair.rise``) for the ``rise`` witness, 0/1 exactly where the atom is on crisp
    inputs."""
    previous = ops.shift(active, -1, False)
    frames = torch.arange(ops.shape[-1], device=ops.device)
    rise = None
    if isinstance(ops, ProductOps):
        p, p_prev = torch.exp(active.true), torch.exp(previous.true)
        step = p - p_prev if kind == "onset" else p_prev - p
        # where(step >= 0, …) not relu: a flat window still has a gradient at its ends
        rise = torch.where(step >= 0, step, torch.zeros_like(step))
    if kind == "onset":
        value = ops.and_exact(active, ops.not_(previous))
        if edges == "open":
            first = ops.crisp((frames > 0)[None].expand(ops.shape))
            value = ops.and_exact(value, first)
            rise = None if rise is None else torch.where(first.true == 0, rise, 0.0)
        return value if rise is None else replace(value, rise=rise)
    value = ops.and_exact(ops.not_(active), previous)
    if ops.valid is not None:
        value = ops.and_exact(value, ops.crisp(ops.valid))
        rise = None if rise is None else torch.where(ops.valid, rise, 0.0)
    if edges == "closed":
        last = ops.shape[-1] - 1 if ops.lengths is None else ops.lengths - 1
        at_last = (frames[None] == last).expand(ops.shape)
        value = ops.or_exact(value, ops.and_exact(active, ops.crisp(at_last)))
        if rise is not None:
            rise = torch.where(at_last, rise + torch.exp(active.true), rise)
    return value if rise is None else replace(value, rise=rise)


def make_ops(semantics: str, shape: torch.Size, lengths: torch.Tensor | None, *,
             dtype: torch.dtype, device: torch.device, node_eps: float = 0.1,
             limit: float = 1e3) -> ProductOps | SoundOps:
    if semantics == "product":
        return ProductOps(shape, lengths, dtype=dtype, device=device)
    if semantics == "sound":
        return SoundOps(shape, lengths, dtype=dtype, device=device, node_eps=node_eps,
                        limit=limit)
    raise SignalError(f"unknown soft semantics {semantics!r}; choose one of "
                      f"{', '.join(SEMANTICS)}")


def soft_formula(formula: Formula | str, signals: Mapping[str, Signal | torch.Tensor], *,
                 hop: float | None = None,
                 bindings: Mapping[str, Bound | int | str] | None = None,
                 rounding: Rounding = "nearest", edges: str = "open",
                 lengths: torch.Tensor | None = None, semantics: str = "product",
                 epsilon: float = 0.1, limit: float = 1e3,
                 dtype: torch.dtype = torch.float32,
                 witness: str = "noisy_or") -> LogPair | Bounds:
    """Soft value of ``formula`` at every frame of ``[rows, frames]`` signals (a Boolean tensor
    is crisp, a float tensor a probability; wrap it in :class:`Signal` to say otherwise).

    ``product``: a :class:`LogPair` (``.value`` in [0, 1]); equals the exact monitor on crisp
    inputs. ``sound``: :class:`Bounds` with ``lower ≤ robustness ≤ upper`` and
    ``upper − lower ≤ epsilon``. ``witness`` (product only): the relaxation of ``N/F/P``
    (``logic.WITNESSES``).
    """
    if isinstance(formula, str):
        formula = parse_formula(formula)
    table_signals = {name: value if isinstance(value, Signal) else
                     Signal(value, "crisp" if value.dtype == torch.bool else "probability")
                     for name, value in signals.items()}
    if not table_signals:
        raise SignalError("no signals given")
    first = next(iter(table_signals.values())).value
    resolver = BoundResolver(hop=hop, bindings=bindings, rounding=rounding)
    depth = smoothing_depth(formula)
    ops = make_ops(semantics, first.shape, lengths, dtype=dtype, device=first.device,
                   node_eps=epsilon / max(depth, 1), limit=limit)
    if witness != "noisy_or":
        if not isinstance(ops, ProductOps):
            raise SignalError(f"the witness relaxation {witness!r} is one of product logic")
        try:
            ops = ops.with_witness(witness)
        except ValueError as exc:
            raise SignalError(str(exc)) from None
    table = SoftTable(table_signals, ops, edges=edges)
    return evaluate_tree(formula, ops, table.lookup, resolver)
