"""Hydra at the edge: the config location, resolvers, and building objects from config groups.
Only ``training`` and ``evaluation`` import this."""

from __future__ import annotations

import functools
import logging
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from lightning.pytorch import Callback
from lightning.pytorch.loggers import Logger
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from sedcontract.errors import SedContractError
from sedcontract.numbers import is_whole
from sedcontract.outputs import guard

log = logging.getLogger(__name__)

CONFIG_PATH = "pkg://sedcontract.configs"
OmegaConf.register_new_resolver("len", len, replace=True)


# keys of the configs before a detector was composed of parts (model, loss, augment), and
# DESED's paths before they were one layout: where each lives now (None: derived, no key)
RENAMED: dict[str, str | None] = {
    "model.contract_loss": "loss.contract (choose loss=contract)",
    "model.pos_weight": "loss.bce.pos_weight",
    "model.target_tolerance": "loss.bce.target_tolerance",
    "model.augment": "augment.waveform (choose augment=perturb)",
    "model.feature_masks": "augment.feature_masks (choose augment=perturb)",
    "model.encoder": "encoder (model=probe encoder=<family>)",
    "model.head": "model.net (the boundary head's refine and kernel)",
    "model.cache_dir": "model.frontend.cache_dir",
    "model.sample_rate": "model.frontend.sample_rate",
    "model.hop": "contract.hop",
    "model.outputs": "data.classes",
    "model.net.features": None,  # the front end's output size
    "model.net.classes": "data.classes",
    # DESED's paths, one layout value of the data module now
    **{f"data.{key}": f"data.layout.{key}" for key in (
        "synth_folder", "synth_tsv", "synth_val_folder", "synth_val_tsv", "synth_val_dur",
        "test_folder", "test_tsv", "test_dur")},
}


def renamed(key: str) -> str:
    """What to say of a key that moved (empty for one that never existed)."""
    for old, new in RENAMED.items():
        if key == old or key.startswith(old + "."):
            if new is None:
                return f"; {old} is not set by hand any more: it follows from the other parts"
            rest = key[len(old):]
            return f"; it is {new.split(' ')[0]}{rest} now{new[len(new.split(' ')[0]):]}"
    return ""


def check_overrides(overrides: Sequence[str]) -> None:
    """Refuse a command-line override of a renamed key before Hydra composes the config (its
    own message would suggest appending the old key with ``+``)."""
    for text in overrides:
        key = text.split("=", 1)[0].lstrip("+~")
        hint = renamed(key)
        if "=" in text and hint:
            raise SedContractError(f"{key} is not a key of the training configs{hint}")


def refuse_renamed(overrides: Sequence[str]) -> None:
    """Exit with status 2 and one line when an override names a renamed key."""
    try:
        check_overrides(overrides)
    except SedContractError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


def check_config(cfg: DictConfig) -> None:
    """Refuse a key that the object its node builds does not take (``+model.no_such=1``), naming
    the key, the object's settings and, for a key that moved, its new name: before anything is
    built, instead of a TypeError from deep inside."""
    import inspect

    from hydra.utils import get_object

    def walk(node: Any, path: str) -> None:
        if not isinstance(node, DictConfig):
            return
        target = node.get("_target_") if "_target_" in node else None
        if target is not None:
            try:
                made = get_object(str(target))
                parameters = inspect.signature(made).parameters
            except (ImportError, ValueError, TypeError):
                parameters = None  # instantiate names what it cannot build
            if parameters is not None and not any(p.kind == p.VAR_KEYWORD
                                                  for p in parameters.values()):
                for key in node:
                    if str(key).startswith("_") or key in parameters:
                        continue
                    known = ", ".join(k for k in parameters  # not those set from parts
                                      if k != "self" and not renamed(f"{path}.{k}"))
                    raise SedContractError(f"{path}.{key} is not a setting of "
                                           f"{str(target).rsplit('.', 1)[-1]} (its settings: "
                                           f"{known}){renamed(f'{path}.{key}')}")
        for key in node:
            if key != "hydra":
                walk(node._get_node(key), f"{path}.{key}" if path else str(key))

    walk(cfg, "")


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


def fix_threads(cfg: DictConfig) -> None:
    """Torch's intra-op threads set to ``cfg.threads`` (the run's, not the machine's): float
    sums are split by the thread count, so the same run on 1 and on 2 threads trains different
    weights (39 of 53 tensors of a two-epoch dilated CNN)."""
    import torch

    count = cfg.get("threads")
    if count is None:
        return
    if not is_whole(count) or count < 1:
        raise SedContractError(f"threads must be a whole number >= 1, got {count!r}")
    torch.set_num_threads(count)


def fix_kernels(cfg: DictConfig) -> None:
    """Pin the CPU kernels when ``cfg.reproducible`` (a key missing: the machine's own), before
    the run's first tensor, and log which kernels the run takes
    (:func:`sedcontract.kernels.fix_kernels`)."""
    from sedcontract.kernels import fix_kernels as pin

    log.info(pin(cfg.get("reproducible", False)).describe())


def guard_run(run_callbacks: Sequence[Any], reads: Mapping[str, Sequence[str | Path]]) -> None:
    """Refuse, before the run starts, report files that would replace one of its inputs
    (``reads``: config key → files, e.g. ``data.test_tsv``), two outputs naming one file, or
    a score folder whose name is taken by a file — as the commands' declared-output guard
    does (:func:`sedcontract.outputs.guard`); the report callbacks keep the inputs and never
    write onto them."""
    from sedcontract.lightning.callbacks import Certification, ReportFiles

    files: dict[str, list[Path]] = {}
    folders: dict[str, list[Path]] = {}
    reads = dict(reads)
    writers = [c for c in run_callbacks if isinstance(c, ReportFiles | Certification)]
    for callback in writers:
        if isinstance(callback, Certification) and callback.file is not None:
            reads["callbacks.certification.targets"] = [callback.file]
    for callback in writers:
        written, trees = callback.outputs()
        if isinstance(callback, ReportFiles):
            files[f"{callback.stem} report"] = written
            folders[f"{callback.stem} score folder (save_scores)"] = trees
        else:
            files[f"{callback.stem} decision file (certification)"] = written
        callback.inputs = [Path(p) for paths in reads.values() for p in paths]
    guard(reads=reads, writes=files, folders=folders,
          creates=[c.dirpath for c in writers])


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
            message = relayed(str(cause if isinstance(cause, SedContractError) else exc))
            to_log_files(logging.ERROR, message)
            print(f"error: {message}", file=sys.stderr)
            sys.exit(2)
    return wrapped


def to_log_files(level: int, message: str) -> None:
    """Write ``message`` to the run's log files only (Hydra's ``<run dir>/<task>.log``): the
    terminal shows it once, on standard error, not also through the console log handler."""
    record = log.makeRecord(log.name, level, __file__, 0, "%s", (message,), None)
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler):
            handler.handle(record)


def relayed(message: str) -> str:
    """The message of an error a DataLoader worker relayed (its whole traceback in the text):
    the last line, without the exception's class."""
    if "Original Traceback" not in message:
        return message
    last = [line for line in message.splitlines() if line.strip()][-1]
    return re.sub(r"^[\w.]+(Error|Exception): ", "", last)
