"""Hydra configs composed for the training tests: the shipped options, overrides for
``eval.yaml`` and other data, the detector a config describes, and a checkpoint payload."""

from __future__ import annotations

import csv
from pathlib import Path

from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra

from tests.helpers.paths import REPO

CONFIGS = REPO / "src" / "sedcontract" / "configs"


def options(group: str) -> list[str]:
    """The shipped options of a config group."""
    return sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))


def compose_config(name: str, overrides: list[str]):
    """``name`` (``train`` or ``eval``) composed with ``overrides``; Hydra is initialised once
    and kept (again only when a test, e.g. through ``train.py``'s ``main``, cleared it)."""
    if not GlobalHydra.instance().is_initialized():
        initialize_config_module("sedcontract.configs", version_base="1.3")
    return compose(name, overrides=overrides)


def for_eval(overrides: list[str], **replace: str) -> list[str]:
    """The shared overrides for ``eval.yaml`` (no logger), with some keys replaced."""
    kept = [o for o in overrides if not o.startswith("logger=")
            and o.split("=", 1)[0] not in replace]
    return kept + [f"{k}={v}" for k, v in replace.items()]


def for_data(overrides: list[str], option: str) -> list[str]:
    """The shared overrides without the controlled benchmark's own keys when another data
    option is chosen."""
    if option == "controlled":
        return overrides
    own = ("data.sizes=", "data.speech_source=")
    return [o for o in overrides if not o.startswith(own)]


def csv_metrics(output_dir: Path) -> list[dict[str, str]]:
    """The rows a run's CSV logger wrote."""
    with open(output_dir / "csv" / "metrics.csv") as f:
        return list(csv.DictReader(f))


class Payload:
    """Unpickling this runs code (it writes a marker file) — what a crafted checkpoint does."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "the payload ran"))


def model_overrides(model: str, checkpoints: dict | None = None) -> list[str]:
    """``model=<model>``, and for an encoder probe the tiny checkpoint of its family
    (``model=probe`` is the wav2vec2 probe unless an ``encoder=`` follows)."""
    if not model.startswith("probe"):
        return [f"model={model}"]
    family = model.removeprefix("probe_") if model != "probe" else "wav2vec2"
    return [f"model={model}", f"encoder.checkpoint={checkpoints[family]}"]


def build(cfg, **options):
    """The detector a composed train config describes, on the policy of its contract group."""
    from hydra.utils import instantiate

    from sedcontract.training import build_model, detector_parts

    return build_model(detector_parts(cfg), instantiate(cfg.contract), list(cfg.data.classes),
                       **options)
