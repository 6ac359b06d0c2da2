"""A local Mini LibriSpeech copy as the speech source of the controlled benchmark.

Layout (as the archives extract): ``<root>/LibriSpeech/<subset>/<speaker>/<chapter>/`` with
``<speaker>-<chapter>-<utterance>.flac`` files and a ``<speaker>-<chapter>.trans.txt``
transcript; ``root`` may also point at the ``LibriSpeech`` folder itself. Train and validation
scenes draw from ``train-clean-5`` (speakers split disjointly), test scenes from
``dev-clean-2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sedcontract.data.audio import MAX_AUDIO_SECONDS, audio_info, check_length
from sedcontract.errors import SedContractError
from sedcontract.requires import AUDIO, need
from sedcontract.traces.tsv import regular_file

SUBSETS = {"train": "train-clean-5", "validation": "train-clean-5", "test": "dev-clean-2"}
LAYOUT = ("<root>/LibriSpeech/<subset>/<speaker>/<chapter>/<speaker>-<chapter>-<n>.flac "
          "with <speaker>-<chapter>.trans.txt beside them (subsets train-clean-5, dev-clean-2)")
VALIDATION_SHARE = 0.15  # of train-clean-5's speakers, held out for validation


@dataclass(frozen=True)
class Utterance:
    path: Path
    speaker: str
    chapter: str
    id: str
    transcript: str


def subset_folder(root: str | Path, subset: str) -> Path:
    """The folder of one subset, accepting ``root`` or ``root/LibriSpeech``."""
    root = Path(root)
    for candidate in (root / "LibriSpeech" / subset, root / subset):
        if candidate.is_dir():
            return candidate
    raise SedContractError(f"no LibriSpeech subset {subset!r} under {root}; expected {LAYOUT}")


def index_subset(root: str | Path, subset: str) -> list[Utterance]:
    """Every utterance of a subset with its transcript, sorted by id."""
    folder = subset_folder(root, subset)
    utterances = []
    for chapter_dir in sorted(p for p in folder.glob("*/*") if p.is_dir()):
        speaker, chapter = chapter_dir.parent.name, chapter_dir.name
        transcript_file = chapter_dir / f"{speaker}-{chapter}.trans.txt"
        if not transcript_file.exists():
            raise SedContractError(f"{transcript_file} is missing; expected {LAYOUT}")
        transcripts = {}
        for number, line in enumerate(regular_file(transcript_file).read_text().splitlines(),
                                      start=1):
            if line.strip():
                key, _, text = line.partition(" ")
                if not text:
                    raise SedContractError(f"{transcript_file}, row {number}: expected "
                                           "'<utterance id> <transcript>'")
                transcripts[key] = text
        for flac in sorted(chapter_dir.glob("*.flac")):
            if flac.stem not in transcripts:
                raise SedContractError(f"{flac} has no line in {transcript_file}")
            utterances.append(Utterance(flac, speaker, chapter, flac.stem,
                                        transcripts[flac.stem]))
    if not utterances:
        raise SedContractError(f"{folder} holds no .flac utterances; expected {LAYOUT}")
    return utterances


def split_utterances(root: str | Path) -> dict[str, list[Utterance]]:
    """Speaker-disjoint train / validation (from train-clean-5) and test (dev-clean-2)."""
    train = index_subset(root, SUBSETS["train"])
    speakers = sorted({u.speaker for u in train})
    held_out = set(speakers[len(speakers) - max(1, round(len(speakers) * VALIDATION_SHARE)):])
    if len(speakers) < 2:
        raise SedContractError(f"{SUBSETS['train']} needs at least two speakers to hold one "
                               "out for validation")
    return {"train": [u for u in train if u.speaker not in held_out],
            "validation": [u for u in train if u.speaker in held_out],
            "test": index_subset(root, SUBSETS["test"])}


def load(utterance: Utterance, sample_rate: int) -> np.ndarray:
    """An utterance as float64 samples; it must already be at ``sample_rate``."""
    soundfile = need("soundfile", "reading audio", AUDIO)
    info = audio_info(utterance.path)  # a regular audio file, its rate checked
    if info.rate != sample_rate:
        raise SedContractError(f"{utterance.path}: sample rate {info.rate}, expected "
                               f"{sample_rate}")
    check_length(info.seconds, MAX_AUDIO_SECONDS, str(utterance.path), None)
    try:
        audio, _ = soundfile.read(str(utterance.path), dtype="float64", always_2d=False)
    except RuntimeError as exc:
        raise SedContractError(f"{utterance.path}: cannot read audio ({exc})") from None
    return audio if audio.ndim == 1 else audio.mean(axis=1)


class LibriSpeechSource:
    """Speech segments cut from one split's utterances, chosen by the scene's generator."""

    def __init__(self, utterances: list[Utterance], sample_rate: int) -> None:
        if not utterances:
            raise SedContractError("no utterances for this split")
        self.utterances, self.sample_rate = utterances, sample_rate

    def __call__(self, rng: np.random.Generator, length: float,
                 sr: int) -> tuple[np.ndarray, dict]:
        utterance = self.utterances[int(rng.integers(len(self.utterances)))]
        audio = load(utterance, sr)
        n = round(length * sr)
        start = int(rng.integers(0, max(len(audio) - n, 0) + 1))
        segment = np.zeros(n)
        piece = audio[start:start + n]
        segment[: len(piece)] = piece
        peak = np.abs(segment).max()
        return (segment / peak if peak > 0 else segment), {
            "source": "librispeech", "utterance": utterance.id,
            "start": round(start / sr, 6)}
