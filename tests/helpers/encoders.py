"""Encoder checkpoints a user could hand in: a wav2vec2 folder whose weights are a pickle."""

from __future__ import annotations

import shutil

import torch


def pickled_wav2vec2(checkpoint, root, payload):
    """A copy of a wav2vec2 directory whose weights are a ``pytorch_model.bin`` of
    ``payload``."""
    copy = root / "wav2vec2"
    shutil.copytree(checkpoint, copy)
    (copy / "model.safetensors").unlink()
    torch.save(payload, copy / "pytorch_model.bin")
    return copy
