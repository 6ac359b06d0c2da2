"""The exact monitor on torch tensors (CPU or GPU batches inside validation): the same
generic operators and tree walk as the numpy monitor, over a torch backend."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.monitor import evaluate_tree
from sedcontract.contracts.parser import parse_formula
from sedcontract.contracts.syntax import Atom, Formula
from sedcontract.errors import SignalError
from sedcontract.traces.names import signal_name


class TorchOps:
    """Shifts along the last axis of ``[rows, frames]`` Boolean tensors; ``lengths`` (or
    None) bounds each row so windows never reach past its own end."""

    def __init__(self, shape: torch.Size, device: torch.device,
                 lengths: torch.Tensor | None = None) -> None:
        self.shape, self.device = shape, device
        self.valid = None
        if lengths is not None:
            self.valid = torch.arange(shape[-1], device=device) < lengths[..., None]

    def _raw(self, x: torch.Tensor, k: int, fill: bool) -> torch.Tensor:
        n = x.shape[-1]
        out = torch.full_like(x, fill)
        if abs(k) < n:
            if k > 0:
                out[..., : n - k] = x[..., k:]
            else:
                out[..., -k:] = x[..., : n + k]
        return out

    def shift(self, x: torch.Tensor, k: int, fill: bool) -> torch.Tensor:
        if k == 0:
            return x
        out = self._raw(x, k, fill)
        if k > 0 and self.valid is not None:
            inside = self._raw(self.valid, k, False)
            out = out | ~inside if fill else out & inside
        return out

    def and_(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x & y

    def or_(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x | y

    def not_(self, x: torch.Tensor) -> torch.Tensor:
        return ~x

    def const(self, value: bool) -> torch.Tensor:
        return torch.full(self.shape, value, dtype=torch.bool, device=self.device)

    def count(self, x: torch.Tensor) -> torch.Tensor:
        if self.valid is not None:
            x = x & self.valid
        return x.sum(dim=-1)


def evaluate_formula_torch(formula: Formula | str, signals: Mapping[str, torch.Tensor], *,
                           lengths: torch.Tensor | None = None, hop: float | None = None,
                           bindings: Mapping[str, int | str] | None = None) -> torch.Tensor:
    """Boolean ``[rows, frames]`` value of ``formula``; signals are Boolean tensors of one shape
    on one device, keyed by atom name (onset/offset atoms are given, not derived, here)."""
    if isinstance(formula, str):
        formula = parse_formula(formula)
    tensors = {}
    shape = device = None
    for name, value in signals.items():
        atom = parse_formula(name)
        if not isinstance(atom, Atom) or value.dtype != torch.bool:
            raise SignalError(f"signal {name!r} must be an atom name with a Boolean tensor")
        if shape is not None and value.shape != shape:
            raise SignalError(f"signals have different shapes: {shape} and {value.shape}")
        shape, device = value.shape, value.device
        tensors[atom.name] = value
    ops = TorchOps(shape, device, lengths)

    def lookup(atom: Atom) -> torch.Tensor:
        key = signal_name(atom.side, atom.kind, atom.cls)
        if key not in tensors:
            raise SignalError(f"unknown atom {key!r}; known: {', '.join(sorted(tensors))}")
        return tensors[key]

    value = evaluate_tree(formula, ops, lookup, BoundResolver(hop=hop, bindings=bindings))
    value = value.expand(shape)
    return value & ops.valid if ops.valid is not None else value.clone()
