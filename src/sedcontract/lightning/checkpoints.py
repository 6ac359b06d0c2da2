"""Checkpoints read without running code: every path that opens one (``evaluate``, resuming
``train``) loads it with :func:`~sedcontract.models.encoders.safe_load`
(``torch.load(weights_only=True)``), which unpickles tensors and plain data only, so a crafted
file cannot execute a payload; what is read is checked against the detector before Lightning
restores it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

from sedcontract.errors import SedContractError
from sedcontract.models.encoders import safe_load

RESUME_KEYS = ("epoch", "global_step", "loops", "optimizer_states")


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The contents of a Lightning checkpoint, loaded as data only; a file that is not one,
    or that holds objects other than tensors and plain containers, is a clear error."""
    path = Path(path)
    if not path.is_file():
        raise SedContractError(f"checkpoint {path} does not exist or is not a file")
    checkpoint = safe_load(path, "checkpoint", "only checkpoints written by sedcontract are read")
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("state_dict"), dict):
        raise SedContractError(f"{path}: not a Lightning checkpoint (it has no state_dict)")
    return checkpoint


def check_weights(checkpoint: dict[str, Any], model: nn.Module, path: str | Path) -> None:
    """The checkpoint's weights fit ``model``: the same parameter names and shapes."""
    expected, found = model.state_dict(), checkpoint["state_dict"]
    missing = sorted(set(expected) - set(found))
    unexpected = sorted(set(found) - set(expected))
    shapes = sorted(k for k in set(expected) & set(found)
                    if not isinstance(found[k], torch.Tensor)
                    or tuple(found[k].shape) != tuple(expected[k].shape))
    if missing or unexpected or shapes:
        detail = "; ".join(f"{what}: {', '.join(keys[:3])}{' …' if len(keys) > 3 else ''}"
                           for what, keys in (("missing", missing), ("unexpected", unexpected),
                                              ("other shapes", shapes)) if keys)
        raise SedContractError(f"{path}: the checkpoint is not of this detector ({detail})")


def check_resumable(checkpoint: dict[str, Any], model: nn.Module, path: str | Path) -> None:
    """A checkpoint training can resume from: this detector's weights and the loop and
    optimiser state Lightning restores."""
    check_weights(checkpoint, model, path)
    missing = [k for k in RESUME_KEYS if k not in checkpoint]
    if missing:
        raise SedContractError(f"{path}: holds no {', '.join(missing)}; training cannot resume "
                               "from it (a weights-only checkpoint can be evaluated)")


def init_weights(model: nn.Module, path: str | Path, *, fresh: tuple[str, ...] = (),
                 classes: tuple[str, ...] | None = None,
                 frontend: dict[str, Any] | None = None) -> list[str]:
    """Load another run's weights into ``model`` to fine-tune it. Every weight of the
    checkpoint must fit (same name and shape); weights of ``model`` under a ``fresh`` prefix
    may be absent (they keep their initial values, which are returned); the class names and
    the front-end settings must agree. Anything else is an error naming what differs."""
    checkpoint = read_checkpoint(path)
    found, expected = checkpoint["state_dict"], model.state_dict()
    hyper = checkpoint.get("hyper_parameters") or {}
    theirs = tuple(hyper.get("classes") or ())
    if classes is not None and theirs and theirs != tuple(classes):
        raise SedContractError(f"{path}: the checkpoint's classes are {', '.join(theirs)}; "
                               f"this detector's are {', '.join(classes)}")
    if frontend is not None and isinstance(hyper.get("model_config"), str):
        stored = json.loads(hyper["model_config"])
        their_frontend = dict(stored.get("model", {}).get("frontend") or {})
        if "hop" in stored and "hop" in frontend:
            their_frontend["hop"] = stored["hop"]
        differ = sorted(k for k in set(frontend) | set(their_frontend)
                        if frontend.get(k) != their_frontend.get(k))
        if differ:
            detail = ", ".join(f"{k}: {their_frontend.get(k)!r} there, {frontend.get(k)!r} here"
                               for k in differ)
            raise SedContractError(f"{path}: the checkpoint's front end differs ({detail})")
    unexpected = sorted(set(found) - set(expected))
    shapes = sorted(f"{k} {tuple(found[k].shape)} there, {tuple(expected[k].shape)} here"
                    for k in set(found) & set(expected)
                    if not isinstance(found[k], torch.Tensor)
                    or tuple(found[k].shape) != tuple(expected[k].shape))
    absent = sorted(k for k in set(expected) - set(found) if not k.startswith(fresh))
    if unexpected or shapes or absent:
        detail = "; ".join(f"{what}: {', '.join(keys[:4])}{' …' if len(keys) > 4 else ''}"
                           for what, keys in (("not in this detector", unexpected),
                                              ("other shapes", shapes),
                                              ("missing from the checkpoint", absent)) if keys)
        raise SedContractError(f"{path}: cannot initialise {type(model).__name__} from this "
                               f"checkpoint ({detail})")
    model.load_state_dict(found, strict=False)
    return sorted(set(expected) - set(found))
