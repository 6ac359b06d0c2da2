"""Callbacks that show each validation's guard vector: in the console, as a W&B table (one
per epoch), and as report files in the run directory — never during the sanity check, and
only on the global-zero process."""

from __future__ import annotations

import logging
from pathlib import Path

from lightning.pytorch import Callback, LightningModule, Trainer
from lightning.pytorch.loggers import WandbLogger

from sedcontract.audit.render import (
    VECTOR_COLUMNS,
    scores_markdown,
    vector_markdown,
    vector_rows,
    write_report,
)

log = logging.getLogger(__name__)

TABLE_COLUMNS = ["epoch", *VECTOR_COLUMNS]


def _ready(trainer: Trainer, pl_module: LightningModule) -> bool:
    return (not trainer.sanity_checking and trainer.is_global_zero
            and getattr(pl_module, "report", None) is not None)


class GuardConsole(Callback):
    """Prints the guard vectors (typed and union, counts beside scores) after validation."""

    def on_validation_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if _ready(trainer, pl_module):
            report = pl_module.report
            scores = "" if report.scores is None else "\n" + scores_markdown(report.scores)
            log.info("epoch %d, step %d — guard vector on %s (%d clips)\n%s%s",
                     trainer.current_epoch, trainer.global_step, trainer.datamodule.val_split,
                     report.traces["clips"], vector_markdown(report), scores)


class GuardTable(Callback):
    """Logs the guard vector as a W&B table ``val/guard_vector`` for every epoch."""

    def on_validation_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if not _ready(trainer, pl_module):
            return
        rows = [[trainer.current_epoch, *row] for row in vector_rows(pl_module.report)]
        for logger in trainer.loggers:
            if isinstance(logger, WandbLogger):
                logger.log_table("val/guard_vector", columns=TABLE_COLUMNS, data=rows,
                                 step=trainer.global_step)


class ReportFiles(Callback):
    """Writes the latest validation report as ``<stem>.json|md|csv`` (and its standard scores)
    into ``dirpath`` after every validation, so a killed run keeps its last vector."""

    def __init__(self, dirpath: str | Path, stem: str = "val_report") -> None:
        self.dirpath, self.stem = Path(dirpath), stem

    def on_validation_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if _ready(trainer, pl_module):
            written = write_report(pl_module.report, self.dirpath, self.stem)
            log.debug("wrote %s", ", ".join(str(p) for p in written))
