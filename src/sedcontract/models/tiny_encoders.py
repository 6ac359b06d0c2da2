"""Tiny random encoders saved in the official on-disk formats (a Hugging Face
``save_pretrained`` directory; BEATs' ``.pt`` with ``cfg`` and ``model``): offline stand-ins
that the tests and the encoder benchmark load through the code path a real checkpoint takes."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import torch


def tiny_checkpoint(family: str, root: Path) -> Path:
    """Write a tiny random ``family`` encoder under ``root``; returns the checkpoint path."""
    torch.manual_seed(0)
    if family == "wav2vec2":
        from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor, Wav2Vec2Model

        config = Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=64, conv_dim=(16,) * 7,
                                num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
                                apply_spec_augment=False)
        path = root / "wav2vec2"
        Wav2Vec2Model(config).save_pretrained(path)
        Wav2Vec2FeatureExtractor(do_normalize=True).save_pretrained(path)
    elif family == "ast":
        from transformers import ASTConfig, ASTFeatureExtractor, ASTModel

        config = ASTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=64, max_length=256, num_mel_bins=64)
        path = root / "ast"
        ASTModel(config).save_pretrained(path)
        ASTFeatureExtractor(num_mel_bins=64, max_length=256).save_pretrained(path)
    elif family == "htsat":
        from transformers import ClapAudioConfig, ClapAudioModel, ClapFeatureExtractor

        config = ClapAudioConfig(hidden_size=32, patch_embeds_hidden_size=8,
                                 depths=[1, 1, 1, 1], num_attention_heads=[1, 1, 1, 1],
                                 window_size=8, spec_size=256, num_mel_bins=64,
                                 projection_dim=16)
        path = root / "htsat"
        ClapAudioModel(config).save_pretrained(path)
        ClapFeatureExtractor(feature_size=64).save_pretrained(path)
    elif family == "beats":
        from sedcontract.models.encoders import speechbrain_beats

        beats = speechbrain_beats()

        cfg = {**beats.BEATsConfig().__dict__, "embed_dim": 32, "encoder_layers": 2,
               "encoder_embed_dim": 32, "encoder_ffn_embed_dim": 64,
               "encoder_attention_heads": 2, "conv_pos": 16, "conv_pos_groups": 2}
        # speechbrain reads cfg only from a checkpoint file: build the random model from cfg
        # (no weights to load yet), then save it in the official layout
        with mock.patch.object(beats.torch, "load", lambda *_, **__: {"cfg": cfg, "model": {}}), \
                mock.patch.object(beats.BEATs, "load_state_dict", lambda *_, **__: None), \
                mock.patch.object(beats.os.path, "exists", lambda _: True):
            model = beats.BEATs("random")
        path = root / "BEATs_tiny.pt"
        torch.save({"cfg": cfg, "model": model.state_dict()}, path)
    else:
        raise ValueError(family)
    return path
