"""Fixtures of the training tier: a tiny controlled benchmark built once per session, the
overrides every run shares, and tiny random encoders in their official formats."""

import pytest

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
    from sedcontract.models.tiny_encoders import tiny_checkpoint

    root = tmp_path_factory.mktemp("encoders")
    return {family: tiny_checkpoint(family, root) for family in ENCODERS}
