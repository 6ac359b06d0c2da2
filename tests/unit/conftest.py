"""The unit tier runs without the training stack: when only this tier runs (``make check``), a
test that imports torch, Lightning or Hydra, or collection that did, fails and is named."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TRAINING_STACK = ("torch", "torchaudio", "lightning", "torchmetrics", "hydra", "omegaconf",
                  "wandb", "transformers", "speechbrain")
HERE = Path(__file__).resolve().parent


def loaded() -> list[str]:
    """The modules of the training stack imported so far."""
    return [name for name in TRAINING_STACK if name in sys.modules]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Watch the training stack only when every collected test is a unit test (the whole suite
    imports it on purpose, in its training tier)."""
    config.stash[WATCH] = bool(items) and all(
        HERE in Path(str(item.path)).resolve().parents for item in items)


WATCH = pytest.StashKey[bool]()


@pytest.fixture(autouse=True)
def _no_training_stack(request: pytest.FixtureRequest):
    if not request.config.stash.get(WATCH, False):
        yield
        return
    before = loaded()
    assert not before, f"collecting the unit tier imported {', '.join(before)}"
    yield
    after = loaded()
    assert not after, (f"{request.node.nodeid} imported {', '.join(after)}: a unit test runs "
                       f"on the evaluation install; move it to tests/train/")
