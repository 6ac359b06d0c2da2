"""Encoder probes: steps land on the contract grid by time; features are cached once per
clip (a cached run never calls the encoder; another layer or checkpoint is another key; a
damaged cache file is recomputed); the encoder's weights never enter a run checkpoint."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from sedcontract.models.boundary import align_steps
from sedcontract.models.encoders import load_encoder
from sedcontract.models.feature_cache import FeatureCache
from sedcontract.training import train
from tests.helpers.encoders import pickled_wav2vec2
from tests.helpers.paths import REPO
from tests.helpers.training import Payload, build, compose_config, model_overrides


def test_steps_land_on_the_grid_by_their_time():
    """Steps every 0.16 s (centres 0.08, 0.24, …) holding their own centre time: each grid
    frame (centre (k + ½)·0.02) reads its own time, held flat before the first and after the
    last centre."""
    centres = 0.08 + 0.16 * torch.arange(10, dtype=torch.float64)
    h = centres.to(torch.float32).reshape(1, 1, -1)
    out = align_steps(h, centres, frames=90, hop=0.02)[0, 0]
    grid = (torch.arange(90) + 0.5) * 0.02
    inside = (grid >= centres[0]) & (grid <= centres[-1])
    assert torch.allclose(out[inside], grid[inside].float(), atol=1e-6)
    assert torch.all(out[grid < centres[0]] == h[0, 0, 0])
    assert torch.all(out[grid > centres[-1]] == h[0, 0, -1])
    same = align_steps(h, (torch.arange(10) + 0.5) * 0.02, frames=10, hop=0.02)
    assert torch.allclose(same, h, atol=1e-6)  # steps already on the grid stay as they are


def probe_config(base, checkpoints, family, *extra):
    return compose_config("train", [*base, *model_overrides(f"probe_{family}", checkpoints),
                                    "trainer.max_epochs=1", *extra])


@pytest.mark.parametrize("family", ["beats", "wav2vec2"])
def test_a_cached_run_never_calls_the_encoder(base, encoder_checkpoints, family, monkeypatch,
                                              tmp_path_factory):
    own = f"model.frontend.cache_dir={tmp_path_factory.mktemp('features')}"  # no other test's cache
    cfg = probe_config(base, encoder_checkpoints, family, own)
    _, first = train(cfg)
    cache = first["model"].frontend.cache
    assert cache.path.is_file() and cache.encoder_calls == 8 + 5  # train and validation clips
    assert first["model"].report is not None

    def refuse(*args, **kwargs):
        raise AssertionError("the encoder ran although its features were cached")

    from sedcontract.models import encoders

    monkeypatch.setattr(encoders.Encoder, "forward", refuse)
    _, second = train(probe_config(base, encoder_checkpoints, family, own))
    assert second["model"].frontend.cache.encoder_calls == 0
    assert second["model"].report.vector("typed").keys() == \
        first["model"].report.vector("typed").keys()


def test_another_layer_or_checkpoint_is_another_cache(tmp_path, encoder_checkpoints):
    clips = [(torch.randn(16000), 16000), (torch.randn(12000), 16000)]
    last = FeatureCache(tmp_path, load_encoder("beats", encoder_checkpoints["beats"]),
                        encoder_checkpoints["beats"])
    last.fill(clips)
    again = FeatureCache(tmp_path, load_encoder("beats", encoder_checkpoints["beats"]),
                         encoder_checkpoints["beats"])
    again.fill(clips)
    assert (last.encoder_calls, again.encoder_calls) == (2, 0) and last.path == again.path
    first = FeatureCache(tmp_path, load_encoder("beats", encoder_checkpoints["beats"], layer=0),
                         encoder_checkpoints["beats"])
    first.fill(clips)
    assert first.path != last.path and first.encoder_calls == 2
    changed = tmp_path / "changed.pt"
    state = torch.load(encoder_checkpoints["beats"], weights_only=True)
    state["model"]["patch_embedding.weight"] += 1.0
    torch.save(state, changed)
    other = FeatureCache(tmp_path, load_encoder("beats", changed), changed)
    other.fill(clips)
    assert other.path != last.path and other.encoder_calls == 2
    short = again.lookup(torch.stack([clips[0][0], torch.nn.functional.pad(clips[1][0],
                                                                           (0, 4000))]),
                         torch.tensor([16000, 12000]), 16000)
    assert short.features.shape[-1] == len(short.spans) and again.encoder_calls == 0


def test_a_damaged_cache_file_is_recomputed(tmp_path, encoder_checkpoints, caplog):
    clips = [(torch.randn(16000), 16000)]
    cache = FeatureCache(tmp_path, load_encoder("ast", encoder_checkpoints["ast"]),
                         encoder_checkpoints["ast"])
    cache.fill(clips)
    cache.path.write_bytes(b"garbage")
    with caplog.at_level("WARNING"):
        again = FeatureCache(tmp_path, load_encoder("ast", encoder_checkpoints["ast"]),
                             encoder_checkpoints["ast"])
    again.fill(clips)
    assert again.encoder_calls == 1 and "unusable" in caplog.text


def test_a_pickle_payload_in_the_cache_is_refused_and_recomputed(tmp_path, encoder_checkpoints,
                                                                 caplog):
    """A cache file holding a pickle that would run code is refused (nothing runs) in one
    warning line naming the file, without torch's advice to load it with weights_only=False."""
    clips = [(torch.randn(16000), 16000)]
    encoder = load_encoder("ast", encoder_checkpoints["ast"])
    cache = FeatureCache(tmp_path, encoder, encoder_checkpoints["ast"])
    marker = tmp_path / "pwned"
    cache.path.parent.mkdir(parents=True)
    torch.save({"identity": cache.identity, "keys": [Payload(marker)]}, cache.path)
    with caplog.at_level("WARNING"):
        again = FeatureCache(tmp_path, encoder, encoder_checkpoints["ast"])
    again.fill(clips)
    assert again.encoder_calls == 1 and not marker.exists()
    [warning] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "unusable" in warning and "could run code" in warning and str(cache.path) in warning
    assert "\n" not in warning and "weights_only" not in warning and "succeed" not in warning


def test_the_encoder_is_not_in_the_run_checkpoint(base, encoder_checkpoints):
    cfg = probe_config(base, encoder_checkpoints, "ast")
    module = build(cfg)
    keys = module.state_dict().keys()
    assert keys and not any("encoder" in k for k in keys)
    assert any(k.startswith("net.refine.") for k in keys)  # the shared boundary head


def test_evaluate_reproduces_a_probe_run_from_its_checkpoint(base, encoder_checkpoints,
                                                              tmp_path):
    """The run checkpoint holds the head, not the encoder: evaluate rebuilds the probe from
    the stored config (the encoder from its own checkpoint) and reports what validation did."""
    import json
    from pathlib import Path

    from sedcontract.evaluation import evaluate
    from sedcontract.guard import to_json
    from tests.helpers.training import for_eval

    cfg = probe_config(base, encoder_checkpoints, "beats")
    _, objects = train(cfg)
    ckpt = Path(cfg.paths.output_dir) / "checkpoints" / "last.ckpt"
    eval_cfg = compose_config("eval", for_eval(base, **{"paths.output_dir": str(tmp_path / "e")},
                                               ckpt_path=str(ckpt), split="validation"))
    _, evaluated = evaluate(eval_cfg)
    assert to_json(evaluated["model"].report) == to_json(objects["model"].report)
    assert "frozen beats features" in json.loads(to_json(evaluated["model"].report)
                                                 )["policy"]["decision"]


def test_train_py_refuses_a_pickled_encoder_checkpoint_in_one_line(base, encoder_checkpoints,
                                                                  tmp_path):
    """``train.py model=probe_wav2vec2 encoder.checkpoint=DIR`` on a ``pytorch_model.bin``
    whose pickle would run code: nothing runs, one error line, no traceback, exit 2."""
    marker = tmp_path / "pwned"
    evil = pickled_wav2vec2(encoder_checkpoints["wav2vec2"], tmp_path, {"w": Payload(marker)})
    run = subprocess.run([sys.executable, str(REPO / "train.py"), *base, "model=probe_wav2vec2",
                          f"encoder.checkpoint={evil}", f"paths.log_dir={tmp_path}"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert run.returncode == 2, run.stderr[-2000:]
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {evil / 'pytorch_model.bin'}: "
                                                     "refused: ")
    assert "Traceback" not in run.stderr and "weights_only" not in run.stderr
    assert not marker.exists()


def test_augmented_batches_bypass_the_feature_cache(base, encoder_checkpoints, tmp_path):
    """With augment=perturb every training batch holds new clips: they are encoded afresh and
    never kept, so the cache holds the splits' own clips only."""
    own = f"model.frontend.cache_dir={tmp_path / 'features'}"
    cfg = compose_config("train", [*base, "model=probe", "augment=perturb", own,
                                   f"encoder.checkpoint={encoder_checkpoints['wav2vec2']}",
                                   "augment.waveform.perturb=1.0", "debug=fdr"])
    _, objects = train(cfg)
    cache = objects["model"].frontend.cache
    assert len(cache.features) == 8 + 5  # the tiny benchmark's training and validation clips
