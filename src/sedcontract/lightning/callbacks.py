"""Callbacks that show each validation's guard vector: in the console, as a W&B table (one
per epoch), as report files in the run directory, and as failure timelines of the worst clips —
never during the sanity check, and only on the global-zero process."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from lightning.pytorch import Callback, LightningModule, Trainer
from lightning.pytorch.loggers import WandbLogger

from sedcontract.errors import SedContractError
from sedcontract.guard.csv_rows import write_report
from sedcontract.guard.render import (
    VECTOR_COLUMNS,
    scores_markdown,
    vector_markdown,
    vector_rows,
)
from sedcontract.outputs import atomic_write
from sedcontract.traces.score_files import scores_tsv
from sedcontract.traces.tsv import events_tsv

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
    and the decided events as ``<stem>_pred.tsv`` (those of the global-zero process's clips)
    into ``dirpath`` after every validation, so a killed run keeps its last vector. With
    ``scores``, also each clip's frame scores as ``<stem>_scores/<clip>.tsv`` (the
    sed_scores_eval layout ``sedcontract audit --pred-scores`` reads), from a monitor that
    keeps them."""

    def __init__(self, dirpath: str | Path, stem: str = "val_report", *,
                 scores: bool = False) -> None:
        self.dirpath, self.stem, self.scores = Path(dirpath), stem, scores
        self.inputs: list[Path] = []  # the run's input files (never written over): the entry
        # point declares them with outputs() and refuses a clash before the run starts

    def outputs(self) -> tuple[list[Path], list[Path]]:
        """The files and the folder (of score files) this callback writes."""
        files = [self.dirpath / f"{self.stem}{suffix}"
                 for suffix in (".json", ".md", ".csv", "_scores.json", "_pred.tsv")]
        return files, [self.dirpath / f"{self.stem}_scores"] if self.scores else []

    def on_validation_epoch_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if self.scores:  # the module builds its monitor in setup
            pl_module.monitor.keep_scores = True

    def on_validation_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if _ready(trainer, pl_module):
            system = type(getattr(pl_module, "net", pl_module)).__name__
            datamodule = trainer.datamodule
            soft = datamodule.soft(datamodule.val_split) if hasattr(datamodule, "soft") \
                else None  # soft-labelled corpora: softness rows for the mechanism table
            written = write_report(pl_module.report, self.dirpath, self.stem, system, soft,
                                   inputs=self.inputs)
            predicted = getattr(pl_module, "predicted", None)
            if predicted is not None:  # the decided events, for sweeps and timelines
                written.append(atomic_write(self.dirpath / f"{self.stem}_pred.tsv",
                                            events_tsv(predicted), inputs=self.inputs))
            if self.scores:
                written += self.write_scores(pl_module.scores_seen, pl_module.monitor)
            log.debug("wrote %s", ", ".join(str(p) for p in written))


    def write_scores(self, scores_of: dict[str, Any], monitor: Any) -> list[Path]:
        """Each kept clip's scores as a score file; a clip id that is not a plain file name is
        refused, naming it."""
        folder = self.dirpath / f"{self.stem}_scores"
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for clip, scores in scores_of.items():
            if not clip or clip in (".", "..") or "/" in clip or "\\" in clip or "\0" in clip:
                raise SedContractError(f"clip id {clip!r} is not a file name; its scores have "
                                       "no score file name")
            written.append(atomic_write(folder / f"{clip}.tsv",
                                        scores_tsv(scores, monitor.classes, monitor.hop),
                                        inputs=self.inputs))
        return written


class Certification(Callback):
    """After every validation, the thresholds of the validation split certified for
    ``targets`` at ``delta`` (:func:`~sedcontract.analysis.certify.certify_changes`: the
    guarantee ``sedcontract certify`` gives), logged as ``val/certified/<class>`` (the
    threshold; NaN: not certified) and ``val/certified/classes``, printed, and written as the
    decision file ``<stem>.yaml`` in ``dirpath`` (the last validation's: the end of the run).
    ``targets``: coordinate → least score, or a risk order's or targets file; None: off."""

    def __init__(self, dirpath: str | Path, targets: Any = None, delta: float = 0.1, *,
                 stem: str = "val_certificate") -> None:
        from sedcontract.analysis.certify import alphas_of
        from sedcontract.analysis.risk_control import check_delta

        self.dirpath, self.stem, self.delta = Path(dirpath), stem, delta
        self.file = None
        if isinstance(targets, str | Path):  # read now: a bad file stops the run at once
            from sedcontract.analysis.certify import read_target_file

            self.file = Path(targets)
            self.targets, self.own = read_target_file(str(targets)).mappings()
        else:
            self.targets, self.own = dict(targets or {}), {}
        for where, given in {"": self.targets, **self.own}.items():
            if given:
                alphas_of(given, f"callbacks.certification.targets{where and ' of ' + where}")
        check_delta(delta, "callbacks.certification.delta")
        self.inputs: list[Path] = []
        self.certificate: Any = None

    @property
    def on(self) -> bool:
        return bool(self.targets or self.own)

    def outputs(self) -> tuple[list[Path], list[Path]]:
        """The decision file this callback writes (none when off)."""
        return ([self.dirpath / f"{self.stem}.yaml"] if self.on else []), []

    def setup(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        """Refuse, before any batch, a policy the certificate cannot be exact for (another
        contract, projection majority, hysteresis: the curves' own limits)."""
        if not self.on:
            return
        from sedcontract.guard.curves import check_curves
        from sedcontract.traces.decision import DecisionPolicy

        policy = pl_module.policy
        classes = pl_module.classes or trainer.datamodule.classes
        unknown = [c for c in self.own if c not in classes]
        if unknown:
            raise SedContractError(f"callbacks.certification: targets for class {unknown[0]!r}, "
                                   f"which the detector does not have ({', '.join(classes)})")
        named = [*self.targets, *(k for own in self.own.values() for k in own)]
        try:
            check_curves(policy, policy.decision or DecisionPolicy(), named)
        except SedContractError as exc:
            raise SedContractError(f"callbacks.certification: {exc}") from None

    def on_validation_epoch_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if not self.on:
            return
        if trainer.world_size > 1:
            raise SedContractError("certification at validation sees one process's clips: run "
                                   "it on one device, or certify the saved scores afterwards "
                                   "(sedcontract certify)")
        pl_module.monitor.keep_scores = True

    def on_validation_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if not (self.on and _ready(trainer, pl_module) and pl_module.scores_seen):
            return
        from sedcontract.analysis.certify import certify_changes
        from sedcontract.guard.curves import clip_changes
        from sedcontract.lightning.metric import KeptTables
        from sedcontract.traces.decision import decision_yaml

        monitor, kept = pl_module.monitor, pl_module.scores_seen
        clips = tuple(c for c in monitor.clips if c in kept)
        changes = clip_changes(monitor.reference_of(clips), KeptTables(monitor, clips, kept),
                               {c: monitor.durations[c] for c in clips}, monitor.policy)
        found = certify_changes(changes, self.targets, delta=self.delta,
                                class_targets=self.own, decision=monitor.policy.decision)
        self.certificate = found
        metrics = {f"val/certified/{c.name}": math.nan if c.threshold is None else c.threshold
                   for c in found.classes}
        metrics["val/certified/classes"] = sum(c.threshold is not None for c in found.classes)
        for logger in trainer.loggers:
            logger.log_metrics(metrics, step=trainer.global_step)
        table = "\n".join(found.markdown())
        log.info("epoch %d — thresholds certified on %s (%d clips)\n%s", trainer.current_epoch,
                 trainer.datamodule.val_split, len(clips), table)
        atomic_write(self.dirpath / f"{self.stem}.yaml", decision_yaml(
            found.decided(), f"certified on the validation split after epoch "
            f"{trainer.current_epoch}\n{table}", certificate=found.as_dict()),
            inputs=self.inputs)


class FailureTimelines(Callback):
    """After each validation, the failure timeline of the clip that fails each coordinate most
    (``per_coordinate`` clips each), one figure per clip showing the coordinates it is worst
    at: PNG files ``dirpath/epoch_<e>/<clip>.png`` (each at its own height) and, with W&B,
    images ``val/timeline`` (padded to one size, :func:`same_size`).
    Clips are those the global-zero process validated (it holds their decided events)."""

    def __init__(self, dirpath: str | Path, per_coordinate: int = 1,
                 coordinates: list[str] | None = None, mode: str = "typed") -> None:
        if per_coordinate < 1:
            raise SedContractError(f"per_coordinate must be >= 1, got {per_coordinate}")
        self.dirpath, self.per_coordinate = Path(dirpath), per_coordinate
        self.coordinates, self.mode = coordinates, mode

    def worst(self, report: Any, seen: set[str]) -> dict[str, list[str]]:
        """``{clip: [coordinates it fails most]}``: per coordinate the clips with the most
        failing obligations (ties by clip id), grouped by clip."""
        modes = report.modes[self.mode]
        chosen: dict[str, list[str]] = {}
        for name in self.coordinates or report.coordinates:
            cells = modes.per_clip(name)
            failing = sorted((c for c in cells if c in seen and
                              cells[c].obligations > cells[c].satisfied),
                             key=lambda c: (cells[c].satisfied - cells[c].obligations, c))
            for clip in failing[:self.per_coordinate]:
                chosen.setdefault(clip, []).append(name)
        return chosen

    def on_validation_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        predicted = getattr(pl_module, "predicted", None)
        if not _ready(trainer, pl_module) or predicted is None or \
                self.mode not in pl_module.report.modes:
            return
        from sedcontract.analysis.timeline import timeline, timeline_png

        ref, durations = trainer.datamodule.reference(trainer.datamodule.val_split)
        folder = self.dirpath / f"epoch_{trainer.current_epoch:03d}"
        pngs, captions = [], []
        for clip, names in self.worst(pl_module.report, set(predicted.clips)).items():
            picture = timeline(ref.select(clips=[clip]), predicted.select(clips=[clip]),
                               pl_module.policy, clip, durations={clip: durations[clip]},
                               mode=self.mode)
            folder.mkdir(parents=True, exist_ok=True)
            pngs.append(timeline_png(picture, names))
            atomic_write(folder / f"{clip}.png", pngs[-1])
            captions.append(f"{clip}: worst at {', '.join(names)}")
        wandb = [logger for logger in trainer.loggers if isinstance(logger, WandbLogger)]
        if wandb and pngs:
            images = same_size(pngs)
            for logger in wandb:
                logger.log_image("val/timeline", images=images, caption=captions,
                                 step=trainer.global_step)


def same_size(pngs: list[bytes]) -> list[Any]:
    """PNG images as PIL images of one size: each padded with white at its right and bottom
    to the largest width and height. A timeline's height grows with its lanes, and W&B logs
    the images of one step at one size (it warns and rescales otherwise)."""
    import io

    from PIL import Image

    images = [Image.open(io.BytesIO(data)).convert("RGB") for data in pngs]
    size = (max(i.width for i in images), max(i.height for i in images))
    padded = []
    for image in images:
        if image.size != size:
            canvas = Image.new("RGB", size, "white")
            canvas.paste(image, (0, 0))
            image = canvas
        padded.append(image)
    return padded
