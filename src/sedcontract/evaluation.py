"""``evaluate(cfg)``: run the exact monitor on one split with a trained checkpoint and write
the guard report, standard scores and CSV source rows into the run directory. ``main`` is the
Hydra entry point (``evaluate.py``, ``sedcontract-eval``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import hydra
import lightning as L
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from sedcontract.config import (
    CONFIG_PATH,
    callback_metrics,
    check_config,
    fix_kernels,
    fix_threads,
    guard_run,
    refuse_renamed,
    report_errors,
)
from sedcontract.errors import SedContractError
from sedcontract.lightning.callbacks import GuardConsole, ReportFiles
from sedcontract.lightning.checkpoints import check_weights, read_checkpoint
from sedcontract.training import (
    LAYOUT,
    build_data,
    build_model,
    detector_parts,
    run_inputs,
)


def checkpoint_detector(checkpoint: dict[str, Any], path: Path
                        ) -> tuple[dict[str, Any] | None, list[str] | None]:
    """The detector's parts (model, loss and augment groups) and the output class names that
    :func:`train` stored in a checkpoint (None where it holds none); a checkpoint of the layout
    before the detector was composed of parts is refused, saying how to retrain."""
    hparams = checkpoint.get("hyper_parameters")
    hparams = hparams if isinstance(hparams, dict) else {}
    config = hparams.get("model_config")
    try:
        config = json.loads(config) if isinstance(config, str) else None
    except ValueError:
        raise SedContractError(f"{path}: the stored detector config is not JSON") from None
    if config is not None and (not isinstance(config, dict) or config.get("layout") != LAYOUT):
        target = config.get("_target_", "?") if isinstance(config, dict) else "?"
        raise SedContractError(
            f"{path}: written by an earlier sedcontract whose detectors were subclasses "
            f"({target.rsplit('.', 1)[-1]}); their checkpoints do not load into the composed "
            "detector. Retrain it (python train.py model=<name> [loss=contract] "
            "[augment=perturb]; model=contract_aware for the contract-aware detector)")
    return config, hparams.get("classes")


def evaluate(cfg: DictConfig) -> tuple[dict[str, float], dict[str, Any]]:
    """Guard vector of the checkpoint ``cfg.ckpt_path`` on split ``cfg.split``."""
    fix_threads(cfg)  # the same scores whatever the machine's cores
    fix_kernels(cfg)  # and on any machine: pinned before any module makes a tensor
    check_config(cfg)  # a key no part takes is named before anything is built
    if OmegaConf.is_missing(cfg, "ckpt_path"):
        raise SedContractError("which checkpoint? evaluate.py ckpt_path=<run dir>/checkpoints/"
                               "last.ckpt (or the best one beside it)")
    path = Path(cfg.ckpt_path)
    if not path.exists():
        raise SedContractError(f"checkpoint {path} does not exist")
    if cfg.get("seed") is not None:
        L.seed_everything(cfg.seed, workers=True)
    checkpoint = read_checkpoint(path)  # data only: a crafted file cannot run code
    parts, classes = checkpoint_detector(checkpoint, path)
    if cfg.get("model"):  # names the model group only: the stored losses (their state) stay
        parts = {**(parts or {}), "model": detector_parts(cfg)["model"]}
    if parts is None:
        raise SedContractError(f"{path}: the checkpoint holds no detector config; name one "
                               "with model=<option>")
    policy = instantiate(cfg.contract)  # the evaluation's one policy: data, detector, monitor
    trained = parts.get("hop", policy.hop)
    if abs(trained - policy.hop) > 1e-9:
        raise SedContractError(f"the detector's frames are {trained:g} s; the contract grid's "
                               f"hop is {policy.hop:g} s (evaluate on the grid it was trained "
                               "on: contract.hop)")
    datamodule = build_data(cfg.data, policy, val_split=cfg.split)
    model = build_model(parts, policy, classes or datamodule.classes, metric_prefix=cfg.split)
    check_weights(checkpoint, model, path)
    files = ReportFiles(cfg.paths.output_dir, f"{cfg.split}_report",
                        scores=bool(cfg.get("save_scores", False)))
    guard_run([files], run_inputs(datamodule, policy, path, cfg.contract))  # before any work
    trainer = instantiate(cfg.trainer, logger=False, callbacks=[GuardConsole(), files],
                          num_sanity_val_steps=0)
    trainer.validate(model, datamodule=datamodule, ckpt_path=str(path), weights_only=True)
    metrics = callback_metrics(trainer)
    return metrics, {"cfg": cfg, "model": model, "datamodule": datamodule, "trainer": trainer}


@hydra.main(version_base="1.3", config_path=CONFIG_PATH, config_name="eval")
@report_errors
def _main(cfg: DictConfig) -> None:
    evaluate(cfg)


def main() -> None:
    """``evaluate.py``: renamed keys among the overrides are refused before Hydra composes."""
    refuse_renamed(sys.argv[1:])
    _main()
