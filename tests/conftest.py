"""Shared fixtures and settings. The CPU kernels are pinned as ``reproducible=true`` pins them.
Hypothesis: no per-example deadline (CI machines vary);
under CI the examples are derandomized so a clean clone always runs the same cases. Training:
a tiny controlled benchmark built once per session, and the overrides every run shares."""

import contextlib
import importlib
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from sedcontract.kernels import pin_environment

# the kernels train.py pins (reproducible=true), set before any test imports torch: each library
# reads them at its first kernel, so every test runs them, whatever ran first
pin_environment()

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


TINY_SIZES = {"train": 8, "validation": 5, "test": 3}


@pytest.fixture(scope="session")
def data_root(tmp_path_factory):
    """A tiny controlled benchmark (synthetic speech), built once for the whole session."""
    from sedcontract.data.build import build_controlled

    root = tmp_path_factory.mktemp("data")
    build_controlled(root, sizes=TINY_SIZES, speech_source="synthetic",
                     log=lambda message: None)
    return root


@pytest.fixture
def base(tmp_path, data_root):
    """Hydra overrides every training test shares: the tiny data, CPU, CSV logs, one epoch."""
    sizes = "{" + ",".join(f"{k}:{v}" for k, v in TINY_SIZES.items()) + "}"
    return [f"paths.output_dir={tmp_path}", f"paths.data_dir={data_root}",
            f"data.sizes={sizes}", "data.speech_source=synthetic", "data.num_workers=0",
            "data.batch_size=2", "trainer=cpu", "logger=csv", "trainer.max_epochs=1",
            "+trainer.enable_progress_bar=false", "+trainer.enable_model_summary=false"]


@pytest.fixture(scope="session")
def encoder_checkpoints(tmp_path_factory):
    """Tiny random encoders of every family, saved in their official on-disk formats."""
    from sedcontract.models.encoders import ENCODERS
    from tests.encoder_fixtures import tiny_checkpoint

    root = tmp_path_factory.mktemp("encoders")
    return {family: tiny_checkpoint(family, root) for family in ENCODERS}


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


@pytest.fixture(scope="session")
def teacher_points(tmp_path_factory):
    """The DCASE baseline's 50 operating-point tables on DESED validation
    (``tests/data/real_dcase/teacher``), extracted once for the session."""
    import tarfile
    from pathlib import Path

    folder = tmp_path_factory.mktemp("points")
    archive = Path(__file__).parent / "data" / "real_dcase" / "teacher" / \
        "operating_points.tar.xz"
    with tarfile.open(archive) as opened:
        opened.extractall(folder, filter="data")
    return folder / "teacher"


@pytest.fixture(scope="session")
def teacher_scores(teacher_points, tmp_path_factory):
    """The baseline's frame scores its operating points imply
    (:func:`tests.real_dcase.implied_scores`), written as sed_scores_eval score files, one per
    clip. Every clip has 156 frames, so frames run past the clips shorter than 9.984 s, as the
    baseline writes them."""
    from tests.real_dcase import write_implied_scores

    return write_implied_scores(tmp_path_factory.mktemp("scores") / "scores", teacher_points)


@contextlib.contextmanager
def imported_script(name: str):
    """A script of ``scripts/`` as a module, its folder on the path as when it runs."""
    folder = str(Path(__file__).resolve().parents[1] / "scripts")
    sys.path.insert(0, folder)
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(folder)
