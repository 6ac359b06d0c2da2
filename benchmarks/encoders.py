"""Encoder probes: feature-extraction throughput per encoder and the measured time-alignment
error (an impulse at a known time against the centre of the step whose features change
most). Tiny random models in the official formats on the CPU; every real checkpoint found at
its documented place under ``checkpoints/`` (see checkpoints/README.md) is measured too, on
the GPU when there is one. No reference tool computes these: the figures stand alone.
Run: ``.venv/bin/python benchmarks/encoders.py``."""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from _rows import record
from sedcontract.models.encoders import ENCODERS, load_encoder
from sedcontract.models.tiny_encoders import tiny_checkpoint

ROOT = Path(__file__).resolve().parents[1]

REAL = {"wav2vec2": "checkpoints/wav2vec2-base", "ast": "checkpoints/ast-audioset",
        "htsat": "checkpoints/clap-htsat-unfused",
        "beats": "checkpoints/BEATs_iter3_plus_AS2M.pt"}


def throughput(encoder, clips: int, seconds: float, device: str) -> float:
    """Clips of ``seconds`` encoded per second (batches of 4, after one warm-up batch)."""
    x = torch.randn(4, round(seconds * 16000), device=device)
    encoder(x, 16000)
    start = time.perf_counter()
    for _ in range(max(1, clips // 4)):
        encoder(x, 16000)
    if device == "cuda":
        torch.cuda.synchronize()
    return 4 * max(1, clips // 4) / (time.perf_counter() - start)


def alignment_error(encoder, impulses: int, device: str, seed: int = 0) -> tuple[float, float]:
    """Mean and largest |impulse time − centre of the most changed step|, in ms, over
    impulses at random times inside 8 s of silence."""
    rng = np.random.default_rng(seed)
    silence = torch.zeros(1, 16000 * 8, device=device)
    base = encoder(silence, 16000).features
    errors = []
    for t in rng.uniform(0.5, 7.5, impulses):
        x = silence.clone()
        x[0, round(t * 16000)] = 1.0
        out = encoder(x, 16000)
        k = int((out.features - base).norm(dim=1)[0].argmax())
        errors.append(abs(float(out.centres[k]) - t) * 1000)
    return float(np.mean(errors)), float(np.max(errors))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=16, help="10 s clips timed per encoder")
    parser.add_argument("--impulses", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the tests use it)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.clips, args.impulses = 4, 2
    logging.disable(logging.INFO)
    warnings.simplefilter("ignore")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"device: {device}; throughput on 10 s clips, batches of 4; alignment error over "
          f"{args.impulses} impulses")
    print(f"{'encoder':10s} {'model':8s} {'step':>8s} {'clips/s':>9s} {'align mean':>11s} "
          f"{'align max':>10s}")
    with tempfile.TemporaryDirectory() as tmp:
        for family in ENCODERS:
            sources = [("tiny", tiny_checkpoint(family, Path(tmp)), "cpu")]
            if (ROOT / REAL[family]).exists():
                sources.append(("real", ROOT / REAL[family], device))
            for kind, checkpoint, where in sources:
                encoder = load_encoder(family, checkpoint).to(where)
                rate = throughput(encoder, args.clips, 10.0, where)
                mean, worst = alignment_error(encoder, args.impulses, where)
                step = encoder(torch.zeros(1, 16000 * 4, device=where), 16000).centres
                print(f"{family:10s} {kind:8s} {float(np.median(np.diff(step))):7.4f}s "
                      f"{rate:9.1f} {mean:9.1f}ms {worst:8.1f}ms")
                record("encoders.py", f"{family} ({kind} model, {where})",
                       f"{rate:.1f} clips/s; alignment error {mean:.0f} ms mean, "
                       f"{worst:.0f} ms max")
    missing = [f for f in ENCODERS if not (ROOT / REAL[f]).exists()]
    if missing:
        print(f"no real checkpoint here for: {', '.join(missing)} (checkpoints/README.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
