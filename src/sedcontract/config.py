"""Hydra at the edge: the config location, resolvers, and building objects from config groups.
Only ``training`` and ``evaluation`` import this."""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from lightning.pytorch import Callback
from lightning.pytorch.loggers import Logger
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from sedcontract.errors import SedContractError

log = logging.getLogger(__name__)

CONFIG_PATH = "pkg://sedcontract.configs"
OmegaConf.register_new_resolver("len", len, replace=True)


def instantiate_all(group: DictConfig | None) -> list[Any]:
    """Every ``_target_`` node of a config group such as ``callbacks`` or ``logger``."""
    if not group:
        return []
    return [instantiate(node) for node in group.values()
            if isinstance(node, DictConfig) and "_target_" in node]


def callbacks(cfg: DictConfig) -> list[Callback]:
    return instantiate_all(cfg.get("callbacks"))


def loggers(cfg: DictConfig) -> list[Logger]:
    return instantiate_all(cfg.get("logger"))


def callback_metrics(trainer: Any) -> dict[str, float]:
    """The trainer's last logged values as plain floats."""
    return {k: float(v) for k, v in trainer.callback_metrics.items()}


def finish_wandb() -> None:
    """Close the W&B run of this process, if one was started (so the next run is separate)."""
    if "wandb" in sys.modules:
        import wandb

        if wandb.run is not None:
            wandb.finish()


def report_errors(task: Callable[[DictConfig], Any]) -> Callable[[DictConfig], Any]:
    """Run a Hydra task; a user mistake (bad input, a config value missing or of the wrong
    type, an object its config cannot build) ends with its message and exit status 2, not a
    traceback."""
    @functools.wraps(task)
    def wrapped(cfg: DictConfig) -> Any:
        try:
            return task(cfg)
        except (SedContractError, InstantiationException, OmegaConfBaseException) as exc:
            cause = exc.__cause__
            message = cause if isinstance(cause, SedContractError) else exc
            log.error("%s", message)
            print(f"error: {message}", file=sys.stderr)
            sys.exit(2)
    return wrapped
