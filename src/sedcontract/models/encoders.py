"""Frozen pretrained audio encoders behind one interface: a waveform at any sample rate gives
features ``[batch, dim, steps]`` and the time span, in seconds, of every step, so a boundary
head can place each step on the contract grid by time, not by index.

wav2vec2, AST and HTS-AT (CLAP's audio tower) come from transformers, BEATs from speechbrain
(which reads the official ``{'cfg', 'model'}`` checkpoint). Token layouts are unfolded here:
AST is frequency-major after two special tokens, BEATs time-major with frequency patches
inside each time patch, HTS-AT folds time into its image's rows; each is pooled over
frequency only, never across time.
"""

from __future__ import annotations

import logging
import pickle
import sys
import zipfile
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import numpy as np
import torch
import torchaudio.functional as AF
from safetensors import SafetensorError, safe_open
from torch import nn

from sedcontract.errors import SedContractError

log = logging.getLogger(__name__)

ENCODERS = ("wav2vec2", "ast", "htsat", "beats")
GUIDE = "checkpoints/README.md"
# config.json model_type of each transformers family (a checkpoint of another is refused)
MODEL_TYPES = {"wav2vec2": ("wav2vec2",), "ast": ("audio-spectrogram-transformer",),
               "htsat": ("clap", "clap_audio_model")}
FBANK_SHIFT, FBANK_WINDOW = 0.010, 0.025  # kaldi fbank of AST and BEATs: 10 ms hop, 25 ms
HF_WEIGHTS = ("a Hugging Face model directory holds model.safetensors, or a pytorch_model.bin "
              "of tensors only")
BEATS_WEIGHTS = ("a BEATs checkpoint is the official .pt, a dict of 'cfg' and 'model' tensors "
                 f"(see {GUIDE})")


class EncoderError(SedContractError):
    """A checkpoint is missing, unreadable or of another encoder family."""


def safe_load(path: str | Path, what: str, valid: str,
              error: type[SedContractError] = SedContractError) -> Any:
    """``torch.load`` of tensors and plain data only, onto the CPU; a pickle of other objects
    (it could run code) or an unreadable file is one line of ``error`` naming the file."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, OSError, RuntimeError, EOFError, ValueError,
            zipfile.BadZipFile) as exc:
        text = str(exc).lower()  # torch names the global a payload would import or call
        if isinstance(exc, pickle.UnpicklingError) and ("global" in text or "reduce" in text):
            raise error(f"{path}: refused: the {what} holds objects other than tensors and "
                        f"plain data, and loading them could run code; {valid}") from None
        cause = str(exc).rpartition("WeightsUnpickler error:")[2].split("Check the doc")[0]
        raise error(f"{path}: not a readable {what} ({' '.join(cause.split())})") from None


@dataclass(frozen=True)
class Encoded:
    """Features ``[batch, dim, steps]`` and the span ``[steps, 2]`` (start, end in seconds of
    the input) that each step summarises."""

    features: torch.Tensor
    spans: torch.Tensor

    @property
    def centres(self) -> torch.Tensor:
        return self.spans.mean(dim=1)


def _uniform_spans(steps: int, step: float, width: float, offset: float = 0.0) -> torch.Tensor:
    """Spans ``[offset + k·step, offset + k·step + width)`` of ``steps`` steps."""
    start = offset + step * torch.arange(steps, dtype=torch.float64)
    return torch.stack([start, start + width], dim=1)


class Encoder(nn.Module, ABC):
    """A frozen encoder: ``forward(waveform [batch, samples], sample_rate)`` → :class:`Encoded`.
    Subclasses set ``family``, ``sample_rate`` and ``dim`` and implement ``encode`` at their
    own rate."""

    family = ""
    sample_rate = 16000

    def __init__(self, layer: int = -1) -> None:
        super().__init__()
        self.layer = layer
        self.dim = 0
        self._logged: set[int] = set()

    def forward(self, waveform: torch.Tensor, sample_rate: int) -> Encoded:
        if waveform.ndim != 2:
            raise EncoderError(f"expected a waveform [batch, samples], got {list(waveform.shape)}")
        if sample_rate != self.sample_rate:
            if sample_rate not in self._logged:
                log.info("%s: resampling %d Hz input to its %d Hz", self.family, sample_rate,
                         self.sample_rate)
                self._logged.add(sample_rate)
            waveform = AF.resample(waveform, sample_rate, self.sample_rate)
        with torch.no_grad():
            encoded = self.encode(waveform.float())
        # steps that start past the input (a padded last window) summarise only padding
        keep = encoded.spans[:, 0] < waveform.shape[-1] / self.sample_rate
        return Encoded(encoded.features[..., keep], encoded.spans[keep])

    @abstractmethod
    def encode(self, waveform: torch.Tensor) -> Encoded:
        """Features and spans of a waveform at the encoder's own rate (each family's own)."""

    def pick(self, hidden: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """``encoder.layer`` of the hidden states (0 = the input embedding, −1 = the last)."""
        if not -len(hidden) <= self.layer < len(hidden):
            raise EncoderError(f"{self.family}: layer {self.layer} does not exist; this "
                               f"checkpoint has layers 0 … {len(hidden) - 1} (or −1 … "
                               f"−{len(hidden)})")
        return hidden[self.layer]

    def windows(self, waveform: torch.Tensor, seconds: float) -> list[torch.Tensor]:
        """The waveform cut into consecutive windows of ``seconds``, the last zero-padded."""
        size = round(seconds * self.sample_rate)
        count = max(1, -(-waveform.shape[-1] // size))
        padded = torch.nn.functional.pad(waveform, (0, count * size - waveform.shape[-1]))
        return list(padded.split(size, dim=-1))


def _check_dir(family: str, checkpoint: str | Path, hub: bool) -> str:
    """A local Hugging Face model directory of ``family``, or a hub name when ``hub``."""
    path = Path(checkpoint)
    if path.is_dir():
        config = path / "config.json"
        if not config.is_file():
            raise EncoderError(f"{path} has no config.json: not a Hugging Face model "
                               f"directory (see {GUIDE})")
        import json

        try:
            model_type = json.loads(config.read_text(encoding="utf-8")).get("model_type")
        except (OSError, ValueError) as exc:
            raise EncoderError(f"{config}: unreadable ({exc})") from exc
        if model_type not in MODEL_TYPES[family]:
            raise EncoderError(f"{path} holds a {model_type!r} model, not a {family} encoder "
                               f"(expected model_type {' or '.join(MODEL_TYPES[family])})")
        return str(path)
    if hub:
        return str(checkpoint)
    raise EncoderError(f"no {family} checkpoint at {path}: put the model directory there (see "
                       f"{GUIDE}), or set encoder.hub=true to download the hub model "
                       f"{checkpoint!r}")


def _pretrained(model_class: Any, family: str, source: str, hub: bool) -> nn.Module:
    """``model_class.from_pretrained``, refusing a checkpoint that lacks some of the model's
    weights: transformers would initialise them at random and the probe would measure noise."""
    try:
        model, info = model_class.from_pretrained(source, local_files_only=not hub,
                                                  output_loading_info=True)
    except (OSError, ValueError) as exc:  # no weights file, a truncated one, no hub access
        raise EncoderError(f"{source}: cannot load the {family} encoder ({exc})") from exc
    except SafetensorError as exc:  # a truncated or damaged .safetensors file
        for weights in sorted(Path(source).glob("*.safetensors")):  # names the file it refuses
            try:
                with safe_open(weights, "pt") as opened:
                    opened.keys()  # reads the header, which a damaged file fails
            except SafetensorError as bad:
                raise EncoderError(f"{weights}: not a readable {family} weights file ({bad}); "
                                   f"{HF_WEIGHTS}") from None
        raise EncoderError(f"{source}: cannot load the {family} encoder ({exc})") from None
    except pickle.UnpicklingError:  # a .bin weights file (safetensors never unpickle)
        for weights in sorted(Path(source).glob("*.bin")):  # names the file it refuses
            safe_load(weights, f"{family} weights file", HF_WEIGHTS, EncoderError)
        raise EncoderError(f"{source}: cannot load the {family} encoder: its .bin weights are "
                           f"not tensors and plain data only; {HF_WEIGHTS}") from None
    missing = info.get("missing_keys") or []
    if missing:
        raise EncoderError(f"{source}: {len(missing)} weights of the {family} encoder are not in "
                           f"the checkpoint (e.g. {sorted(missing)[0]}); it would run with random "
                           "weights. Is it a checkpoint of this encoder?")
    return model.eval()


class Wav2Vec2Encoder(Encoder):
    """wav2vec2 (``Wav2Vec2Model``): 16 kHz; one step per conv-stack stride (20 ms), spanning
    the stack's receptive field (25 ms)."""

    family = "wav2vec2"

    def __init__(self, checkpoint: str | Path, layer: int = -1, hub: bool = False) -> None:
        super().__init__(layer)
        from transformers import AutoFeatureExtractor, Wav2Vec2Model

        source = _check_dir(self.family, checkpoint, hub)
        self.model = _pretrained(Wav2Vec2Model, self.family, source, hub)
        try:  # normalisation as the checkpoint was trained (do_normalize), when it says
            self.extractor = AutoFeatureExtractor.from_pretrained(source,
                                                                  local_files_only=not hub)
        except OSError:
            self.extractor = None
        config = self.model.config
        self.dim = config.hidden_size
        stride, field = 1, 1
        for kernel, step in zip(config.conv_kernel, config.conv_stride, strict=True):
            field += (kernel - 1) * stride
            stride *= step
        self.stride, self.field = stride, field  # samples

    def encode(self, waveform: torch.Tensor) -> Encoded:
        if self.extractor is not None and getattr(self.extractor, "do_normalize", False):
            mean = waveform.mean(dim=-1, keepdim=True)
            waveform = (waveform - mean) / torch.sqrt(waveform.var(dim=-1, keepdim=True) + 1e-7)
        out = self.model(waveform, output_hidden_states=True)
        hidden = self.pick(out.hidden_states).transpose(1, 2)
        rate = self.sample_rate
        return Encoded(hidden, _uniform_spans(hidden.shape[-1], self.stride / rate,
                                              self.field / rate))


class ASTEncoder(Encoder):
    """AST (``ASTModel``): 16 kHz kaldi fbank of ``max_length`` frames (fixed position
    embeddings, so long inputs are windowed); tokens are two special ones, then frequency-major
    patches; a time column every ``time_stride`` frames (0.1 s)."""

    family = "ast"

    def __init__(self, checkpoint: str | Path, layer: int = -1, hub: bool = False) -> None:
        super().__init__(layer)
        from transformers import ASTFeatureExtractor, ASTModel

        source = _check_dir(self.family, checkpoint, hub)
        self.model = _pretrained(ASTModel, self.family, source, hub)
        config = self.model.config
        try:
            self.extractor = ASTFeatureExtractor.from_pretrained(source,
                                                                 local_files_only=not hub)
        except OSError:
            self.extractor = ASTFeatureExtractor(num_mel_bins=config.num_mel_bins,
                                                 max_length=config.max_length)
        self.dim = config.hidden_size
        self.freq = (config.num_mel_bins - config.patch_size) // config.frequency_stride + 1
        self.time = (config.max_length - config.patch_size) // config.time_stride + 1
        self.max_length, self.patch, self.tstride = (config.max_length, config.patch_size,
                                                     config.time_stride)

    def encode(self, waveform: torch.Tensor) -> Encoded:
        seconds = self.max_length * FBANK_SHIFT
        feats, spans = [], []
        for w, window in enumerate(self.windows(waveform, seconds)):
            inputs = self.extractor(list(window.cpu().numpy()), sampling_rate=self.sample_rate,
                                    return_tensors="pt")
            out = self.model(inputs["input_values"].to(waveform.device),
                             output_hidden_states=True)
            tokens = self.pick(out.hidden_states)[:, 2:]  # after [CLS] and [DIST]
            grid = tokens.reshape(len(window), self.freq, self.time, -1)  # frequency-major
            feats.append(grid.mean(dim=1).transpose(1, 2))
            spans.append(_uniform_spans(self.time, self.tstride * FBANK_SHIFT,
                                        (self.patch - 1) * FBANK_SHIFT + FBANK_WINDOW,
                                        offset=w * seconds))
        return Encoded(torch.cat(feats, dim=-1), torch.cat(spans))


class HTSATEncoder(Encoder):
    """HTS-AT (``ClapAudioModel``): 48 kHz, windows of the extractor's 10 s; the Swin image
    folds time into ``freq_ratio`` blocks of rows, unfolded here for any layer; steps divide
    each window evenly (32 per 10 s at the last layer, 0.3125 s)."""

    family = "htsat"
    sample_rate = 48000

    def __init__(self, checkpoint: str | Path, layer: int = -1, hub: bool = False) -> None:
        super().__init__(layer)
        from transformers import AutoConfig, ClapAudioModel, ClapFeatureExtractor, ClapModel

        source = _check_dir(self.family, checkpoint, hub)
        kind = AutoConfig.from_pretrained(source, local_files_only=not hub).model_type
        if kind == "clap":  # a whole CLAP model (laion/clap-htsat-*): keep its audio tower
            self.model = _pretrained(ClapModel, self.family, source, hub).audio_model.eval()
        else:
            self.model = _pretrained(ClapAudioModel, self.family, source, hub)
        config = self.model.config
        if getattr(config, "enable_fusion", False):
            raise EncoderError(f"{source} is a fused CLAP model (enable_fusion): its input is four "
                               "views of a long clip, not a time axis; use an unfused HTS-AT "
                               "checkpoint (e.g. laion/clap-htsat-unfused)")
        try:
            self.extractor = ClapFeatureExtractor.from_pretrained(source,
                                                                  local_files_only=not hub)
        except OSError:
            self.extractor = ClapFeatureExtractor(feature_size=config.num_mel_bins)
        self.freq_ratio = config.spec_size // config.num_mel_bins
        self.seconds = float(self.extractor.max_length_s)
        stages = len(config.depths)  # hidden states: the patch embedding, then each stage
        if layer != -1 and not -(stages + 1) <= layer <= stages:
            raise EncoderError(f"htsat: layer {layer} does not exist; this checkpoint has "
                               f"layers 0 … {stages} (−1: the last, normalised)")
        # channels double at each stage but the last; the last layer keeps the last stage's
        self.dim = config.patch_embeds_hidden_size * 2 ** min(
            stages if layer == -1 else layer % (stages + 1), stages - 1)

    def unfold(self, image: torch.Tensor) -> torch.Tensor:
        """``[batch, channels, rows, cols]`` → ``[batch, channels, time]``: rows hold
        ``freq_ratio`` consecutive blocks of time, each of ``rows / freq_ratio`` frequency
        rows; frequency is averaged."""
        b, c, rows, cols = image.shape
        blocks = image.reshape(b, c, self.freq_ratio, rows // self.freq_ratio, cols)
        return blocks.mean(dim=3).reshape(b, c, self.freq_ratio * cols)

    def encode(self, waveform: torch.Tensor) -> Encoded:
        feats, spans = [], []
        for w, window in enumerate(self.windows(waveform, self.seconds)):
            inputs = self.extractor(list(window.cpu().numpy()), sampling_rate=self.sample_rate,
                                    return_tensors="pt", padding="pad",
                                    truncation="rand_trunc")  # windows are exactly 10 s
            out = self.model(input_features=inputs["input_features"].to(waveform.device),
                             output_hidden_states=True)
            if self.layer == -1:  # transformers unfolds the last layer: [batch, c, freq, time]
                steps = out.last_hidden_state.mean(dim=2)
            else:
                steps = self.unfold(out.hidden_states[self.layer])
            step = self.seconds / steps.shape[-1]
            feats.append(steps)
            spans.append(_uniform_spans(steps.shape[-1], step, step, offset=w * self.seconds))
        return Encoded(torch.cat(feats, dim=-1), torch.cat(spans))


def speechbrain_beats() -> ModuleType:
    """speechbrain's BEATs module. speechbrain leaves placeholder modules for optional
    integrations (k2, …) in ``sys.modules`` that raise ``ImportError`` on any attribute read,
    which breaks tools that walk ``sys.modules`` (hypothesis, some debuggers); the placeholders
    not yet loaded are dropped (importing one later works as usual)."""
    from speechbrain.lobes.models import beats
    from speechbrain.utils.importutils import LazyModule

    for name, module in list(sys.modules.items()):
        if isinstance(module, LazyModule) and module.lazy_module is None:
            del sys.modules[name]
    return beats


class BEATsEncoder(Encoder):
    """BEATs (speechbrain's ``BEATs`` on the official ``{'cfg', 'model'}`` checkpoint): 16 kHz
    kaldi fbank (128 mel, 25/10 ms), 16×16 patches, tokens time-major with the frequency
    patches of one time patch together; 0.16 s per step."""

    family = "beats"

    def __init__(self, checkpoint: str | Path, layer: int = -1, hub: bool = False) -> None:
        super().__init__(layer)
        path = Path(checkpoint)
        if not path.is_file():
            raise EncoderError(f"no beats checkpoint at {path}: put the official .pt file "
                               f"there (see {GUIDE}); BEATs is not on the Hugging Face hub")
        data = safe_load(path, "BEATs checkpoint", BEATS_WEIGHTS, EncoderError)
        if not isinstance(data, dict) or not {"cfg", "model"} <= set(data):
            keys = sorted(data) if isinstance(data, dict) else type(data).__name__
            raise EncoderError(f"{path}: a BEATs checkpoint holds 'cfg' and 'model'; this "
                               f"one holds {keys}")
        beats = speechbrain_beats()
        # speechbrain's own torch.load(path) is neither weights-only nor onto the CPU: hand
        # it the data read above
        with mock.patch.object(beats.torch, "load", lambda *_, **__: data):
            self.model = beats.BEATs(str(path), freeze=True, output_all_hiddens=True).eval()
        self.dim = self.model.cfg.encoder_embed_dim
        self.patch = self.model.cfg.input_patch_size
        self.freq = 128 // self.patch  # fbank bins / patch height

    def encode(self, waveform: torch.Tensor) -> Encoded:
        lens = torch.ones(len(waveform), device=waveform.device)  # speechbrain needs wav_lens
        # every layer's output, the input embedding first, each [tokens, batch, dim]
        hidden = self.model(waveform, wav_lens=lens)[0]
        tokens = self.pick(tuple(hidden)).transpose(0, 1)
        b, n, d = tokens.shape
        grid = tokens.reshape(b, n // self.freq, self.freq, d)  # time-major
        feats = grid.mean(dim=2).transpose(1, 2)
        return Encoded(feats, _uniform_spans(feats.shape[-1], self.patch * FBANK_SHIFT,
                                             (self.patch - 1) * FBANK_SHIFT + FBANK_WINDOW))


FAMILIES: dict[str, type[Encoder]] = {"wav2vec2": Wav2Vec2Encoder, "ast": ASTEncoder,
                                      "htsat": HTSATEncoder, "beats": BEATsEncoder}


def load_encoder(family: str, checkpoint: str | Path, layer: int = -1,
                 hub: bool = False) -> Encoder:
    """A frozen encoder of ``family`` from a local checkpoint (``hub``: a hub name may be
    downloaded; never otherwise)."""
    if family not in FAMILIES:
        raise EncoderError(f"unknown encoder {family!r}; choose one of {', '.join(ENCODERS)}")
    encoder = FAMILIES[family](checkpoint, layer, hub)
    for parameter in encoder.parameters():
        parameter.requires_grad_(False)
    return encoder.eval()


def describe(encoder: Encoder) -> dict[str, Any]:
    """What identifies the features an encoder gives (for cache keys and reports)."""
    return {"family": encoder.family, "layer": encoder.layer, "rate": encoder.sample_rate,
            "dim": encoder.dim}


def step_seconds(encoded: Encoded) -> float:
    """The median distance between consecutive step centres."""
    centres = encoded.centres.numpy()
    return float(np.median(np.diff(centres))) if len(centres) > 1 else float("nan")
