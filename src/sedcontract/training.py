"""``train(cfg)``: build the datamodule, detector, callbacks and loggers from a composed config
and fit with validation by the exact monitor (the callbacks print the guard vectors and write
the report files). ``main`` is the Hydra entry point (``train.py``, ``sedcontract-train``)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
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
    finish_wandb,
    loggers,
    report_errors,
)
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.errors import SedContractError
from sedcontract.lightning.checkpoints import check_resumable, read_checkpoint

log = logging.getLogger(__name__)


def build_model(model_cfg: DictConfig | dict, contract_cfg: DictConfig | AuditPolicy,
                classes: Sequence[str] | None = None,
                metric_prefix: str = "val") -> L.LightningModule:
    """The detector module of ``model_cfg`` (outputs named ``classes``) under the audit policy
    of ``contract_cfg`` (a ``contract`` config group or a policy); the resolved model config and
    the class names travel in its checkpoints."""
    if isinstance(model_cfg, DictConfig):
        model_cfg = OmegaConf.to_container(model_cfg, resolve=True)
    policy = contract_cfg if isinstance(contract_cfg, AuditPolicy) else instantiate(contract_cfg)
    # the policy is an object, not config: it joins after Hydra has built the rest
    factory = instantiate(model_cfg, model_config=json.dumps(model_cfg),
                          classes=list(classes) if classes is not None else None,
                          metric_prefix=metric_prefix, _convert_="all", _partial_=True)
    return factory(policy=policy)


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
    if cfg.get("seed") is not None:
        L.seed_everything(cfg.seed, workers=True)
    output_dir = Path(cfg.paths.output_dir)
    if cfg.trainer.get("max_epochs") == 0:
        raise SedContractError("trainer.max_epochs=0 trains nothing and writes nothing; give "
                               "at least 1 (to validate a checkpoint, use evaluate.py)")
    datamodule = instantiate(cfg.data)
    model = build_model(cfg.model, cfg.contract, datamodule.classes)
    resume = resume_path(cfg.get("ckpt_path"), output_dir)
    if resume is not None:
        check_resumable(read_checkpoint(resume), model, resume)
    run_loggers = loggers(cfg)
    trainer = instantiate(cfg.trainer, callbacks=callbacks(cfg), logger=run_loggers or False)
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
def main(cfg: DictConfig) -> float | None:
    metrics, _ = train(cfg)
    return metrics.get(cfg.get("optimized_metric"))
