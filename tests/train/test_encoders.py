"""Frozen encoders: tiny random models saved in the official on-disk formats load through the
user's code path; output steps have the documented time step; an impulse changes the step
whose span holds it most; bad checkpoints are named errors; nothing is downloaded."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import torch

from sedcontract.models.encoders import (
    ENCODERS,
    EncoderError,
    load_encoder,
    step_seconds,
)
from sedcontract.models.tiny_encoders import tiny_checkpoint
from tests.helpers.encoders import pickled_wav2vec2
from tests.helpers.training import Payload

STEP = {"wav2vec2": 0.02, "ast": 0.1, "htsat": 0.3125, "beats": 0.16}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("encoders")
    return {family: tiny_checkpoint(family, root) for family in ENCODERS}


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Any attempt to reach the hub fails the test."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.mark.parametrize("family", ENCODERS)
def test_steps_have_the_documented_time_step_and_cover_the_input(family, checkpoints):
    encoder = load_encoder(family, checkpoints[family])
    out = encoder(torch.randn(2, 16000 * 3), 16000)
    assert out.features.shape[:2] == (2, encoder.dim)
    assert out.features.shape[-1] == len(out.spans)
    assert step_seconds(out) == pytest.approx(STEP[family], abs=1e-9)
    spans = out.spans
    assert float(spans[0, 0]) == 0.0 and bool(torch.all(spans[:, 1] > spans[:, 0]))
    assert float(spans[-1, 0]) < 3.0 <= float(spans[-1, 0]) + 2 * STEP[family]
    assert not any(p.requires_grad for p in encoder.parameters())


@pytest.mark.parametrize("family", ENCODERS)
@pytest.mark.parametrize("layer", [0, -1])
def test_an_impulse_changes_the_step_that_holds_it_most(family, layer, checkpoints):
    """An impulse at 1.5 s (and at 2.3 s): the step whose features change most (against
    silence) is within one step of the impulse."""
    encoder = load_encoder(family, checkpoints[family], layer=layer)
    silence = torch.zeros(1, 16000 * 4)
    base = encoder(silence, 16000).features
    for t in (1.5, 2.3):
        x = silence.clone()
        x[0, round(t * 16000)] = 1.0
        out = encoder(x, 16000)
        k = int((out.features - base).norm(dim=1)[0].argmax())
        centre = float(out.centres[k])
        assert abs(centre - t) <= STEP[family] + float(out.spans[k, 1] - out.spans[k, 0]) / 2, \
            (family, layer, t, out.spans[k].tolist())


def test_inputs_at_another_rate_are_resampled_with_a_log_line(checkpoints, caplog):
    encoder = load_encoder("wav2vec2", checkpoints["wav2vec2"])
    with caplog.at_level("INFO"):
        at_8k = encoder(torch.randn(1, 8000 * 2), 8000)
        encoder(torch.randn(1, 8000 * 2), 8000)
    assert sum("resampling 8000 Hz" in r.message for r in caplog.records) == 1
    assert at_8k.features.shape[-1] == encoder(torch.randn(1, 16000 * 2), 16000).features.shape[-1]


def test_long_inputs_are_windowed_for_fixed_length_encoders(checkpoints):
    """AST's position embeddings fix its input at max_length frames (2.56 s here) and HTS-AT
    takes 10 s windows: a longer input is cut into windows whose steps continue in time."""
    ast = load_encoder("ast", checkpoints["ast"])
    out = ast(torch.randn(1, 16000 * 6), 16000)
    starts = out.spans[:, 0]
    # windows of 2.56 s hold 25 columns 0.1 s apart; 9 columns of the third start before 6 s
    assert len(starts) == 25 + 25 + 9 and bool(torch.all(torch.diff(starts) > 0))
    assert float(starts[25]) == pytest.approx(2.56)  # the second window's first step
    htsat = load_encoder("htsat", checkpoints["htsat"])
    out = htsat(torch.randn(1, 48000 * 12), 48000)
    assert len(out.spans) == 39 and float(out.spans[32, 0]) == pytest.approx(10.0)


def test_missing_and_wrong_checkpoints_are_named_errors(checkpoints, tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(EncoderError, match=r"no ast checkpoint at .*nowhere.*checkpoints/README"):
        load_encoder("ast", missing)
    with pytest.raises(EncoderError, match=r"no beats checkpoint.*checkpoints/README"):
        load_encoder("beats", missing)
    with pytest.raises(EncoderError, match="holds a 'wav2vec2' model, not a ast encoder"):
        load_encoder("ast", checkpoints["wav2vec2"])
    with pytest.raises(EncoderError, match="unknown encoder 'whisper'"):
        load_encoder("whisper", missing)
    no_config = tmp_path / "empty"
    no_config.mkdir()
    with pytest.raises(EncoderError, match=r"no config\.json"):
        load_encoder("htsat", no_config)
    wrong = tmp_path / "wrong.pt"
    torch.save({"state_dict": {}}, wrong)
    with pytest.raises(EncoderError, match="holds 'cfg' and 'model'; this one holds"):
        load_encoder("beats", wrong)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint")
    with pytest.raises(EncoderError, match="not a readable BEATs checkpoint"):
        load_encoder("beats", garbage)
    with pytest.raises(EncoderError, match="layer 7 does not exist"):
        load_encoder("wav2vec2", checkpoints["wav2vec2"], layer=7)(torch.randn(1, 16000), 16000)
    no_weights = tmp_path / "no_weights"
    no_weights.mkdir()
    (no_weights / "config.json").write_text((checkpoints["ast"] / "config.json").read_text())
    with pytest.raises(EncoderError, match="cannot load the ast encoder"):
        load_encoder("ast", no_weights)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(EncoderError, match="unreadable"):
        load_encoder("wav2vec2", broken)
    assert json.loads((checkpoints["ast"] / "config.json").read_text())["model_type"] == \
        "audio-spectrogram-transformer"


def test_loading_beats_leaves_no_placeholder_module_that_breaks_hypothesis(checkpoints):
    """speechbrain puts modules in sys.modules that raise ImportError on any attribute read;
    hypothesis reads every module's attributes, and every property test after the first BEATs
    load failed. None is left once an encoder is loaded."""
    import sys

    from speechbrain.utils.importutils import LazyModule

    load_encoder("beats", checkpoints["beats"])
    left = [n for n, m in sys.modules.items() if isinstance(m, LazyModule) and
            m.lazy_module is None]
    assert left == []


def test_a_whole_clap_checkpoint_gives_its_audio_tower(tmp_path):
    """laion/clap-htsat-* are whole CLAP models (model_type clap): loaded as the audio model
    alone, transformers would leave every audio weight random. The tower's own weights are
    kept, and a checkpoint missing weights is refused instead of run at random."""
    from transformers import ClapConfig, ClapModel

    audio = dict(hidden_size=32, patch_embeds_hidden_size=8, depths=[1, 1, 1, 1],
                 num_attention_heads=[1, 1, 1, 1], window_size=8, spec_size=256,
                 num_mel_bins=64, projection_dim=16)
    text = dict(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=1,
                intermediate_size=32, projection_dim=16)
    torch.manual_seed(1)
    whole = ClapModel(ClapConfig(text_config=text, audio_config=audio, projection_dim=16))
    whole.save_pretrained(tmp_path / "clap")
    encoder = load_encoder("htsat", tmp_path / "clap")
    mine = dict(encoder.model.named_parameters())
    theirs = dict(whole.audio_model.named_parameters())
    assert mine.keys() == theirs.keys()
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)
    from safetensors.torch import load_file, save_file

    weights = tmp_path / "clap" / "model.safetensors"
    state = load_file(weights)
    save_file({k: v for k, v in state.items() if "patch_embed" not in k}, weights)
    with pytest.raises(EncoderError, match=r"not in the checkpoint .*random weights"):
        load_encoder("htsat", tmp_path / "clap")


def test_a_fused_clap_model_is_refused(tmp_path):
    """A fused CLAP model's input is four views of a long clip, not a time axis."""
    from transformers import ClapAudioConfig, ClapAudioModel

    config = ClapAudioConfig(hidden_size=32, patch_embeds_hidden_size=8, depths=[1, 1, 1, 1],
                             num_attention_heads=[1, 1, 1, 1], window_size=8, spec_size=256,
                             num_mel_bins=64, projection_dim=16, enable_fusion=True)
    ClapAudioModel(config).save_pretrained(tmp_path / "fused")
    with pytest.raises(EncoderError, match="fused CLAP model"):
        load_encoder("htsat", tmp_path / "fused")


@pytest.mark.parametrize("keep", [5, 100, 0.5], ids=["header", "metadata", "half"])
def test_a_truncated_safetensors_file_is_a_named_error(checkpoints, tmp_path, keep):
    """A model.safetensors cut short (an interrupted copy) is one line naming the file, not
    safetensors' traceback."""
    copy = tmp_path / "wav2vec2"
    shutil.copytree(checkpoints["wav2vec2"], copy)
    weights = copy / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:int(keep * len(data)) if keep < 1 else keep])
    with pytest.raises(EncoderError, match=f"^{re.escape(str(weights))}: not a readable "
                                           "wav2vec2 weights file") as refused:
        load_encoder("wav2vec2", copy)
    assert "\n" not in str(refused.value)


def test_a_data_only_pytorch_model_bin_still_loads(checkpoints, tmp_path):
    from safetensors.torch import load_file

    weights = load_file(checkpoints["wav2vec2"] / "model.safetensors")
    bin_dir = pickled_wav2vec2(checkpoints["wav2vec2"], tmp_path, weights)
    assert load_encoder("wav2vec2", bin_dir).dim == load_encoder("wav2vec2",
                                                                 checkpoints["wav2vec2"]).dim


@pytest.mark.parametrize("reader", ["wav2vec2", "beats", "run"])
@pytest.mark.parametrize("payload", [True, False], ids=["payload", "no-pickle"])
def test_a_pickle_payload_is_refused_in_one_line_without_running(reader, payload, checkpoints,
                                                                 tmp_path):
    """Every file read with torch.load (an encoder's weights, a BEATs .pt, a run checkpoint)
    refuses a pickle that would run code: nothing runs, and the one-line message names the
    file and never repeats torch's advice to load it with weights_only=False; a file that is
    no pickle at all is unreadable, not refused."""
    from sedcontract.errors import SedContractError
    from sedcontract.lightning.checkpoints import read_checkpoint

    marker = tmp_path / "pwned"
    if reader == "wav2vec2":
        named = pickled_wav2vec2(checkpoints["wav2vec2"], tmp_path, {}) / "pytorch_model.bin"
    else:
        named = tmp_path / "evil.pt"
    if payload:
        torch.save({"cfg": {}, "model": Payload(marker), "state_dict": {}}, named)
    else:
        named.write_bytes(b"not a checkpoint")
    expected = "refused: the .*could run code; " if payload else \
        r"not a readable .*\(Unsupported operand"
    with pytest.raises(SedContractError, match=f"^{re.escape(str(named))}: {expected}") as refused:
        if reader == "run":
            read_checkpoint(named)
        else:
            load_encoder(reader, named.parent if reader == "wav2vec2" else named)
    message = str(refused.value)
    assert "\n" not in message and "weights_only" not in message and "succeed" not in message
    assert isinstance(refused.value, EncoderError) == (reader != "run")
    assert not marker.exists()
