"""What the evaluation install leaves out: the training stack (the ``train`` extra). A module of
it imported here, when missing, is one clear error that says what to install, never a bare
``ModuleNotFoundError`` deep in a command."""

from __future__ import annotations

import importlib
from types import ModuleType

from sedcontract.errors import SedContractError

TRAIN_EXTRA = "pip install 'sedcontract[train]'"
AUDIO = "pip install soundfile (or the train extra)"  # reading audio alone
# what the training entry points need before anything else is imported
TRAINING = ("torch", "torchaudio", "lightning", "hydra", "omegaconf", "wandb")


def need(name: str, purpose: str, install: str = TRAIN_EXTRA) -> ModuleType:
    """``import name`` for ``purpose``; refused with what to install (``install``) when it is
    missing."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != name.split(".")[0]:
            raise  # the module is there and something it imports is broken: show it
        raise SedContractError(f"{purpose} needs {name}, which the evaluation install leaves "
                               f"out: {install}") from None
