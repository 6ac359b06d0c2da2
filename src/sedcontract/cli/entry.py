"""The training entry points, ``sedcontract-train`` and ``sedcontract-eval``: in an evaluation
install they say what to install (status 2) instead of failing on an import."""

from __future__ import annotations

from collections.abc import Callable

from sedcontract.cli.command import reported
from sedcontract.requires import TRAINING, need


def _run(prog: str, module: str) -> int:
    def run() -> int:
        for name in TRAINING:
            need(name, prog)
        main: Callable[[], object] = need(module, prog).main
        main()
        return 0
    return reported(prog, run)


def train() -> int:
    """``sedcontract-train``: ``train.py``'s Hydra entry point."""
    return _run("sedcontract-train", "sedcontract.training")


def evaluate() -> int:
    """``sedcontract-eval``: ``evaluate.py``'s Hydra entry point."""
    return _run("sedcontract-eval", "sedcontract.evaluation")
