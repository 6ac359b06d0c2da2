"""Build the controlled benchmark on disk: audio (16-bit wav), a JSONL manifest per split,
DCASE reference and duration tsv files, and a top-level manifest with hashes.

Deterministic from the seed: a rebuild is byte-identical. Every file is written atomically;
audio is rewritten only when its bytes would change, so an interrupted build resumes without
duplicates and a corrupt file is regenerated. A build whose manifest, configuration and audio
hashes all match is skipped outright.
"""

from __future__ import annotations

import hashlib
import io
import json
import wave
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from sedcontract.data.librispeech import LAYOUT, LibriSpeechSource, split_utterances
from sedcontract.data.options import SPEECH_SOURCES, check_sizes
from sedcontract.data.perturb import FAMILIES, SEVERITIES
from sedcontract.data.scenes import SceneConfig, SpeechSource, make_scene, synthetic_speech
from sedcontract.errors import SedContractError
from sedcontract.numbers import is_whole
from sedcontract.outputs import atomic_write
from sedcontract.traces.documents import read_json
from sedcontract.traces.tsv import regular_file

FORMAT_VERSION = 1


def wav_bytes(x: np.ndarray, sr: int) -> bytes:
    """16-bit PCM mono wav, deterministic bytes."""
    pcm = np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(sr)
        f.writeframes(pcm.tobytes())
    return buffer.getvalue()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def perturbation_for(index: int) -> tuple[str, float]:
    """Test items cycle through every family × severity."""
    family = FAMILIES[index % len(FAMILIES)]
    severities = SEVERITIES[family]
    return family, severities[(index // len(FAMILIES)) % len(severities)]


@dataclass(frozen=True)
class BuildResult:
    root: Path
    manifest_hash: str
    written: int   # audio files (re)written
    skipped: int   # audio files already valid


def speech_sources(choice: str, librispeech_root: str | Path | None, sample_rate: int,
                   log: Callable[[str], None]) -> tuple[str, dict[str, SpeechSource]]:
    """Resolve ``auto | librispeech | synthetic`` to a speech source per split."""
    if choice not in SPEECH_SOURCES:
        raise SedContractError(f"unknown speech source {choice!r}; choose one of "
                               f"{', '.join(SPEECH_SOURCES)}")
    if choice == "synthetic":
        return "synthetic", {}
    if librispeech_root is None:
        if choice == "librispeech":
            raise SedContractError("speech_source=librispeech needs a local Mini LibriSpeech "
                                   f"copy (--librispeech-root); expected {LAYOUT}")
        log("no Mini LibriSpeech copy configured (--librispeech-root): using the synthetic "
            "speech source")
        return "synthetic", {}
    try:
        splits = split_utterances(librispeech_root)
    except SedContractError as exc:
        if choice == "librispeech":
            raise
        log(f"{exc}; using the synthetic speech source")
        return "synthetic", {}
    return "librispeech", {split: LibriSpeechSource(utterances, sample_rate)
                           for split, utterances in splits.items()}


def build_controlled(root: str | Path, *, seed: int = 0, sizes: Mapping[str, int] | None = None,
                     config: SceneConfig | None = None, speech_source: str = "auto",
                     librispeech_root: str | Path | None = None,
                     log: Callable[[str], None] = print, rebuild: bool = False) -> BuildResult:
    """Build (or verify) ``root/controlled``; returns what was written and the manifest hash.
    A benchmark already there that was built with other settings (seed, sizes, speech source,
    scene configuration) is refused, naming them, unless ``rebuild`` asks to replace it: an
    experiment meant for one benchmark never silently trains on another."""
    if not is_whole(seed) or seed < 0:
        raise SedContractError(f"the seed must be a non-negative integer, got {seed!r}")
    config = config or SceneConfig()
    sizes = check_sizes(sizes)
    out = Path(root) / "controlled"
    source, sources = speech_sources(speech_source, librispeech_root, config.sample_rate, log)
    corpus = {split: [u.id for u in s.utterances] for split, s in sources.items()}
    settings = {"format_version": FORMAT_VERSION, "seed": seed, "sizes": sizes,
                "config": asdict(config), "speech_source": source,
                "speech_corpus_sha256": _sha256(json.dumps(corpus, sort_keys=True).encode())}
    config_hash = _sha256(json.dumps(settings, sort_keys=True).encode())
    top = out / "manifest.json"
    previous = _read_manifest(top, log)
    if previous is not None and previous.get("config_hash") != config_hash and not rebuild:
        raise SedContractError(f"{top}: the controlled benchmark there was built with "
                               f"{_differences(previous, settings)}; point the data root "
                               "elsewhere, or replace it with data.rebuild=true (sedcontract "
                               "data build controlled --rebuild)")
    if previous is not None and previous.get("config_hash") == config_hash \
            and _audio_valid(out, previous):
        log(f"controlled benchmark in {out} is up to date ({previous['manifest_hash'][:12]})")
        return BuildResult(out, previous["manifest_hash"], 0, sum(sizes.values()))
    written = skipped = 0
    split_hashes: dict[str, str] = {}
    file_hashes: dict[str, str] = {}
    for split_index, (split, count) in enumerate(sizes.items()):
        seeds = np.random.SeedSequence([seed, split_index]).generate_state(count)
        (out / "audio" / split).mkdir(parents=True, exist_ok=True)
        lines, events_tsv, durations_tsv = [], ["filename\tonset\toffset\tevent_label"], \
            ["filename\tduration"]
        for i, item_seed in enumerate(seeds.tolist()):
            item = f"{split}_{i:04d}"
            perturbation = perturbation_for(i) if split == "test" else None
            audio, record = make_scene(int(item_seed), config, perturbation,
                                       sources.get(split, synthetic_speech))
            data = wav_bytes(audio, config.sample_rate)
            digest = _sha256(data)
            path = out / "audio" / split / f"{item}.wav"
            if path.is_file() and _sha256(path.read_bytes()) == digest:
                skipped += 1
            else:
                atomic_write(path, data)
                written += 1
            lines.append(json.dumps({"id": item, "split": split, **record,
                                     "audio": str(path.relative_to(out)), "sha256": digest},
                                    sort_keys=True))
            events_tsv += [f"{item}.wav\t{on!r}\t{off!r}\t{label}"
                           for on, off, label in record["events"]]
            if not record["events"]:
                events_tsv.append(f"{item}.wav\t\t\t")
            durations_tsv.append(f"{item}.wav\t{config.duration!r}")
        manifest = "".join(line + "\n" for line in lines).encode()  # an empty split: no line
        atomic_write(out / f"{split}.jsonl", manifest)
        for name, text in ((f"{split}.tsv", events_tsv), (f"{split}_durations.tsv",
                                                          durations_tsv)):
            data = ("\n".join(text) + "\n").encode()
            atomic_write(out / name, data)
            file_hashes[name] = _sha256(data)
        split_hashes[split] = _sha256(manifest)
        log(f"{split}: {count} scenes")
    manifest_hash = _sha256(json.dumps(split_hashes, sort_keys=True).encode())
    atomic_write(top, (json.dumps({**settings, "config_hash": config_hash,
                                    "splits": split_hashes, "files": file_hashes,
                                    "manifest_hash": manifest_hash},
                                   indent=2, sort_keys=True) + "\n").encode())
    log(f"controlled benchmark in {out}: {written} audio files written, {skipped} already "
        f"valid; manifest {manifest_hash[:12]}")
    return BuildResult(out, manifest_hash, written, skipped)


SETTING_NAMES = {"seed": "seed", "sizes": "sizes", "speech_source": "speech source",
                 "speech_corpus_sha256": "speech corpus", "config": "scene configuration",
                 "format_version": "format version"}


def _differences(previous: Mapping, settings: Mapping) -> str:
    """The settings of an earlier build that differ from the ones asked for, in words."""
    def shown(value: object) -> str:
        text = json.dumps(value, sort_keys=True) if isinstance(value, dict) else repr(value)
        return text if len(text) <= 80 else text[:77] + "…"

    asked = json.loads(json.dumps(settings))  # as the manifest holds them (tuples as lists)
    parts = [f"{name} {shown(previous.get(key))} (asked: {shown(asked[key])})"
             for key, name in SETTING_NAMES.items() if previous.get(key) != asked[key]]
    return ", ".join(parts) or "other settings"


def _read_manifest(path: Path, log: Callable[[str], None]) -> dict | None:
    """The top-level manifest of an earlier build, or None when there is none or it is not
    one (truncated, not JSON, not an object, fields missing): the build then starts over."""
    if not path.exists():
        return None
    try:
        data = read_json(path, "build manifest", max_bytes=None)
    except (OSError, SedContractError):
        data = None
    fields = {"config_hash": str, "manifest_hash": str, "splits": dict, "files": dict}
    if not isinstance(data, dict) or not all(isinstance(data.get(k), t)
                                             for k, t in fields.items()):
        log(f"{path} is not a manifest of this build (corrupt or foreign): rebuilding")
        return None
    return data


def _audio_valid(out: Path, previous: dict) -> bool:
    """Every split manifest, reference and durations file matches its recorded hash and every
    audio file its sha256 (anything unreadable is not valid)."""
    try:
        for name, digest in previous["files"].items():
            path = out / name
            if not path.is_file() or _sha256(path.read_bytes()) != digest:
                return False
        for split, digest in previous["splits"].items():
            manifest = out / f"{split}.jsonl"
            if not manifest.is_file() or _sha256(manifest.read_bytes()) != digest:
                return False
            for item in read_jsonl(manifest):
                path = out / item["audio"]
                if not path.is_file() or _sha256(path.read_bytes()) != item["sha256"]:
                    return False
    except (OSError, SedContractError, KeyError, TypeError):
        return False
    return True


def read_jsonl(path: Path) -> list[dict]:
    """The objects of a JSON-lines manifest (blank lines skipped); a bad line is an error
    naming the file and line."""
    try:
        text = regular_file(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SedContractError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                               ) from None
    items = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise SedContractError(f"{path}, line {number}: not JSON ({exc})") from None
        if not isinstance(item, dict):
            raise SedContractError(f"{path}, line {number}: not a JSON object")
        items.append(item)
    return items
