"""The exact monitor on torch tensors (CPU or GPU batches inside validation): the same
generic operators and tree walk as the numpy monitor, over a torch backend."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from sedcontract.contracts.backend import SlicingOps
from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.monitor import evaluate_tree
from sedcontract.contracts.parser import parse_formula
from sedcontract.contracts.syntax import Atom, Formula
from sedcontract.errors import SignalError
from sedcontract.traces.names import signal_name


class TorchOps(SlicingOps):
    """The torch backend: ``lengths`` (or None) bounds each row so windows never reach past
    its own end."""

    def __init__(self, shape: torch.Size, device: torch.device,
                 lengths: torch.Tensor | None = None) -> None:
        valid = None
        if lengths is not None:
            valid = torch.arange(shape[-1], device=device) < lengths[..., None]
        super().__init__(shape, valid)
        self.device = device

    def _full_like(self, x: torch.Tensor, fill: bool) -> torch.Tensor:
        return torch.full_like(x, fill)

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
