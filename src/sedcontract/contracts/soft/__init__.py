"""Differentiable contracts: the same syntax tree, bounds and grid as the exact monitor,
compiled to torch (product logic in log space, or certified smooth robustness), and the
clause losses built on them."""

from sedcontract.contracts.soft.events import ClauseTerms, NoRelaxation, SoftEvents
from sedcontract.contracts.soft.frame import SEMANTICS, Signal, smoothing_depth, soft_formula
from sedcontract.contracts.soft.logic import (
    WITNESSES,
    Bounds,
    LogPair,
    ProductOps,
    SoundOps,
)
from sedcontract.contracts.soft.loss import ContractLoss

__all__ = ["SEMANTICS", "WITNESSES", "Bounds", "ClauseTerms", "ContractLoss", "LogPair",
           "NoRelaxation", "ProductOps", "Signal", "SoftEvents", "SoundOps", "smoothing_depth",
           "soft_formula"]
