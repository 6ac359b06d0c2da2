"""``train(cfg)``: build the datamodule, detector, callbacks and loggers from a composed config
and fit with validation by the exact monitor (the callbacks print the guard vectors and write
the report files). ``main`` is the Hydra entry point (``train.py``, ``sedcontract-train``)."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import hydra
import lightning as L
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from sedcontract.config import (
    CONFIG_PATH,
    callback_metrics,
    callbacks,
    check_config,
    finish_wandb,
    fix_kernels,
    fix_threads,
    guard_run,
    loggers,
    refuse_renamed,
    report_errors,
)
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.errors import SedContractError
from sedcontract.lightning.checkpoints import check_resumable, read_checkpoint
from sedcontract.lightning.module import DetectorModule

log = logging.getLogger(__name__)


LAYOUT = 2  # a checkpoint's detector config: the model, loss and augment groups


def detector_parts(cfg: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    """The groups a detector is composed of (``model``, ``loss``, ``augment``), resolved to
    plain data: what a checkpoint stores to rebuild it."""
    parts = {name: cfg.get(name) for name in ("model", "loss", "augment")}
    return {name: OmegaConf.to_container(value, resolve=True) if isinstance(value, DictConfig)
            else value for name, value in parts.items()}


def build_model(parts: Mapping[str, Any], policy: AuditPolicy, classes: Sequence[str],
                metric_prefix: str = "val", **validation: Any) -> DetectorModule:
    """The detector of ``parts`` (:func:`detector_parts`) with outputs named ``classes``: the
    front end on the policy's grid, the network on its features, the losses and the batch
    transform, every part built with the run's one ``policy``; the parts, the grid's hop and the
    class names travel in its checkpoints, the ``validation`` settings (``curves``,
    ``curves_max_rate``) do not."""
    model = dict(parts["model"])
    missing = [k for k in ("frontend", "net") if k not in model]
    if missing:
        raise SedContractError(f"the model config names no {' or '.join(missing)}")
    frontend = instantiate(model.pop("frontend"), hop=policy.hop)
    net = instantiate(model.pop("net"), features=frontend.dim, classes=len(classes))
    losses = {name: instantiate(node, _partial_=True)(policy=policy, classes=tuple(classes))
              for name, node in (parts.get("loss") or {}).items()}
    augment = parts.get("augment") or None
    if augment is not None:
        augment = instantiate(augment, _partial_=True)(policy=policy)
    factory = instantiate(model, _convert_="all", _partial_=True)
    # the policy and the built parts are objects, not config: they join after Hydra
    return factory(net=net, frontend=frontend, policy=policy, losses=losses, augment=augment,
                   classes=list(classes), metric_prefix=metric_prefix,
                   model_config=json.dumps({**parts, "layout": LAYOUT, "hop": policy.hop}),
                   **validation)


def build_data(data_cfg: DictConfig, policy: AuditPolicy, **overrides: Any) -> Any:
    """The datamodule of ``data_cfg`` on the run's policy."""
    return instantiate(data_cfg, _partial_=True, **overrides)(policy=policy)


def run_inputs(datamodule: Any, policy: AuditPolicy, checkpoint: str | Path | None,
               contract_cfg: Any = None) -> dict[str, list[Path]]:
    """The files a run reads, by the config key that names them: the data's, the contract
    file's, the decision file's (``contract.decision.file`` of ``contract_cfg``) and the
    checkpoint's."""
    from sedcontract.contracts import contract_file

    reads = dict(datamodule.inputs()) if hasattr(datamodule, "inputs") else {}
    contract = contract_file(policy.contract)  # None for a parsed contract
    if contract is not None:
        reads["contract.contract"] = [contract]
    decision = (contract_cfg or {}).get("decision") or {}
    if decision.get("file"):
        reads["contract.decision.file"] = [Path(decision["file"])]
    if checkpoint is not None:
        reads["ckpt_path"] = [Path(checkpoint)]
    return reads


def validation_settings(cfg: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    """The run's validation settings the detector takes: ``curves`` (log the threshold-free
    curve areas ``val/curves/...``) and ``curves_max_rate``."""
    curves = cfg.get("curves", False)
    if not isinstance(curves, bool):
        raise SedContractError(f"curves must be true or false, got {curves!r}")
    return {"curves": curves, "curves_max_rate": cfg.get("curves_max_rate", 100.0)}


def resume_path(ckpt_path: str | None, output_dir: Path) -> str | None:
    """``last`` names ``<output_dir>/checkpoints/last.ckpt``; any other path must exist."""
    if ckpt_path is None:
        return None
    path = output_dir / "checkpoints" / "last.ckpt" if ckpt_path == "last" else Path(ckpt_path)
    if not path.exists():
        raise SedContractError(f"checkpoint {path} does not exist; resume with "
                               "ckpt_path=<file> or hydra.run.dir=<run dir> ckpt_path=last")
    return str(path)


def train(cfg: DictConfig) -> tuple[dict[str, float], dict[str, Any]]:
    """Fit ``cfg.model`` on ``cfg.data``; returns the final metrics and the objects built."""
    fix_threads(cfg)  # the same weights whatever the machine's cores or OMP_NUM_THREADS
    fix_kernels(cfg)  # and on any machine: pinned before any module makes a tensor
    check_config(cfg)  # a key no part takes is named before anything is built
    if cfg.get("seed") is not None:
        L.seed_everything(cfg.seed, workers=True)
    output_dir = Path(cfg.paths.output_dir)
    if cfg.trainer.get("max_epochs") == 0:
        raise SedContractError("trainer.max_epochs=0 trains nothing and writes nothing; give "
                               "at least 1 (to validate a checkpoint, use evaluate.py)")
    policy = instantiate(cfg.contract)  # the run's one policy: data, detector, losses, monitor
    datamodule = build_data(cfg.data, policy)
    model = build_model(detector_parts(cfg), policy, datamodule.classes,
                        **validation_settings(cfg))  # curves refused here, before any batch
    resume = resume_path(cfg.get("ckpt_path"), output_dir)
    if resume is not None:
        check_resumable(read_checkpoint(resume), model, resume)
    run_callbacks = callbacks(cfg)
    guard_run(run_callbacks, run_inputs(datamodule, policy, resume, cfg.contract))  # first
    run_loggers = loggers(cfg)
    trainer = instantiate(cfg.trainer, callbacks=run_callbacks, logger=run_loggers or False)
    objects = {"cfg": cfg, "datamodule": datamodule, "model": model, "trainer": trainer,
               "loggers": run_loggers}
    for logger in run_loggers:
        logger.log_hyperparams(OmegaConf.to_container(cfg, resolve=True))
    try:
        trainer.fit(model, datamodule=datamodule, ckpt_path=resume, weights_only=True)
    finally:
        finish_wandb()
    metrics = callback_metrics(trainer)
    checkpoint = next((c for c in trainer.checkpoint_callbacks if c.best_model_path), None)
    if checkpoint is not None:
        log.info("best checkpoint (%s): %s", checkpoint.monitor, checkpoint.best_model_path)
    return metrics, objects


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="train")
@report_errors
def _main(cfg: DictConfig) -> float | None:
    metrics, _ = train(cfg)
    return metrics.get(cfg.get("optimized_metric"))


def main() -> float | None:
    """``train.py``: renamed keys among the overrides are refused before Hydra composes."""
    refuse_renamed(sys.argv[1:])
    return _main()
