"""Miniature copies of the public corpora, written by the tests in their exact layouts:
a MAESTRO Real development tree (two scenes, two files, soft labels and audio), a DESED root in
the Task 4 baseline's layout (strong synthetic training, synthetic validation and real
validation sets) and a DCASE 2024 Task 4 baseline output directory (chunk score files with all
27 columns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile

from sedcontract.data.dcase_baseline import COLUMNS as BASELINE_COLUMNS
from sedcontract.data.dcase_baseline import FRAME as BASELINE_FRAME
from sedcontract.data.dcase_baseline import FRAMES as BASELINE_FRAMES

# file → (scene, duration in s, {class: soft value per 1 s segment})
MAESTRO_FILES = {
    "cafe_restaurant_00": ("cafe_restaurant", 12.0, {
        "people talking": [0.9, 1.0, 0.6, 0.5, 0.7, 0.8, 0, 0, 0, 0, 0, 0.2],
        "cutlery and dishes": [0, 0, 0.4, 0.8, 0.8],
        "furniture dragging": [0, 0, 0, 0, 0, 0, 1.0],  # not one of the 11 evaluated
    }),
    "metro_station_01": ("metro_station", 9.5, {
        "metro approaching": [0.9, 0.9, 0.9],
        "metro leaving": [0, 0, 0, 0, 0, 0, 0, 0.55, 0.75, 0.75],
    }),
}
# the hard reference (soft > 0.5) of the 11 evaluated classes, computed by hand
MAESTRO_EVENTS = [
    ("cafe_restaurant_00", 0.0, 3.0, "people talking"),
    ("cafe_restaurant_00", 4.0, 6.0, "people talking"),
    ("cafe_restaurant_00", 3.0, 5.0, "cutlery and dishes"),
    ("metro_station_01", 0.0, 3.0, "metro approaching"),
    ("metro_station_01", 7.0, 9.5, "metro leaving"),
]
SAMPLE_RATE = 16_000


def write_maestro(root: Path, *, audio: bool = True) -> Path:
    """``root/development_annotation/soft_labels_<scene>/<file>.txt`` (no header, tab-separated
    ``onset offset label soft``, one row per non-zero segment) and
    ``root/development_audio/<scene>/<file>.wav``."""
    for file, (scene, duration, labels) in MAESTRO_FILES.items():
        folder = root / "development_annotation" / f"soft_labels_{scene}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for k in range(int(np.ceil(duration))):
            for label, values in labels.items():
                if k < len(values) and values[k] > 0:
                    lines.append(f"{k:.1f}\t{min(k + 1.0, duration):.1f}\t{label}\t{values[k]}")
        (folder / f"{file}.txt").write_text("\n".join(lines) + "\n")
        if audio:
            wav = root / "development_audio" / scene / f"{file}.wav"
            wav.parent.mkdir(parents=True, exist_ok=True)
            rng = np.random.default_rng(len(file))
            soundfile.write(wav, 0.05 * rng.standard_normal(int(duration * SAMPLE_RATE)),
                            SAMPLE_RATE, subtype="PCM_16")
    return root

def baseline_scores(events: list[tuple[float, float, str]], start: float = 0.0) -> np.ndarray:
    """``[156, 27]`` scores of one chunk starting at ``start`` s of its file: 0.9 where a
    frame's centre lies inside an event of its class (file time), else 0.1."""
    centres = start + (np.arange(BASELINE_FRAMES) + 0.5) * BASELINE_FRAME
    scores = np.full((BASELINE_FRAMES, len(BASELINE_COLUMNS)), 0.1)
    for onset, offset, label in events:
        scores[(centres >= onset) & (centres < offset), BASELINE_COLUMNS.index(label)] = 0.9
    return scores


def write_score_file(path: Path, scores: np.ndarray) -> None:
    """A sed_scores_eval score tsv as the baseline writes it: ``onset offset <27 classes>``,
    frame times relative to the clip, no index column."""
    times = np.arange(len(scores) + 1) * BASELINE_FRAME
    lines = ["\t".join(("onset", "offset", *BASELINE_COLUMNS))]
    lines += ["\t".join([f"{times[k]:.3f}", f"{times[k + 1]:.3f}",
                         *(f"{v:.6f}" for v in scores[k])]) for k in range(len(scores))]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def write_baseline(exp: Path, desed: dict[str, list[tuple[float, float, str]]],
                   maestro: dict[str, list[tuple[float, float, str]]],
                   maestro_durations: dict[str, float]) -> Path:
    """``exp/metrics_test/student_scores/postprocessed/<clip>.tsv`` as the baseline's
    evaluation writes them: one file per DESED clip, and one per 10 s MAESTRO chunk every 5 s
    (``<file>-<start cs>-<end cs>``, the last one shorter but scored on 156 frames)."""
    folder = exp / "metrics_test" / "student_scores" / "postprocessed"
    for clip, events in desed.items():
        write_score_file(folder / f"{clip}.tsv", baseline_scores(events))
    for file, events in maestro.items():
        start = 0.0
        while True:
            end = min(start + 10.0, maestro_durations[file])
            chunk = f"{file}-{round(start * 100):06d}-{round(end * 100):06d}"
            write_score_file(folder / f"{chunk}.tsv", baseline_scores(events, start))
            if end >= maestro_durations[file]:
                break
            start += 5.0
    return folder


# DESED in the DCASE Task 4 baseline's layout (sedcontract.data.desed.LAYOUT): set → clips,
# each clip → (seconds of audio, sample rate, events); a clip of None events is a
# filename-only row (a clip without events), one absent from the tsv is named only by the
# durations tsv
DESED_SYNTH = {
    "s0": (10.0, 16_000, [(1.0, 2.5, "Dog"), (4.0, 10.0, "Speech")]),
    "s1": (10.0, 16_000, [(0.0, 3.0, "Cat")]),
    "s2": (8.0, 16_000, [(2.0, 4.0, "Blender")]),  # short audio: zero-padded to 10 s
    "s3": (10.0, 16_000, [(5.0, 6.0, "Frying")]),
}
DESED_SYNTH_VAL = {
    "v0": (10.0, 16_000, [(0.5, 1.5, "Dishes")]),
    "v1": (10.0, 16_000, None),
}
# the real validation set: durations rounded to 0.1 s, Y1's Dog ends 0.115 s after its 9.7 s
DESED_REAL = {
    "Y1_0.000_10.000": (9.73, 16_000, [(0.2, 3.0, "Speech"), (5.0, 9.815, "Dog")]),
    "Y2_30.000_40.000": (10.0, 16_000, []),
}
DESED_REAL_DURATIONS = {"Y1_0.000_10.000": 9.7, "Y2_30.000_40.000": 10.0}


def write_desed_set(audio: Path, tsv: Path, clips: dict, durations: Path | None = None,
                    listed: dict[str, float] | None = None) -> None:
    """One set: ``audio/<clip>.wav`` (16-bit PCM noise), ``tsv`` (``filename onset offset
    event_label``) and, when given, ``durations`` (``filename duration``)."""
    audio.mkdir(parents=True, exist_ok=True)
    tsv.parent.mkdir(parents=True, exist_ok=True)
    lines = ["filename\tonset\toffset\tevent_label"]
    for clip, (seconds, rate, events) in clips.items():
        rng = np.random.default_rng(len(clip) + int(seconds))
        soundfile.write(audio / f"{clip}.wav", 0.05 * rng.standard_normal(round(seconds * rate)),
                        rate, subtype="PCM_16")
        if events is None:
            lines.append(f"{clip}.wav\t\t\t")
        lines += [f"{clip}.wav\t{on:.3f}\t{off:.3f}\t{label}" for on, off, label in events or ()]
    tsv.write_text("\n".join(lines) + "\n")
    if durations is not None:
        rows = listed or {clip: seconds for clip, (seconds, _, _) in clips.items()}
        durations.write_text("filename\tduration\n"
                             + "".join(f"{c}.wav\t{d}\n" for c, d in rows.items()))


def write_desed(root: Path, *, real_rate: int = 16_000,
                real_folder: str = "audio/validation/validation_16k") -> Path:
    """A DESED root in the baseline's layout: the strong synthetic training set, the
    synthetic validation set and the real validation set (at ``real_rate`` in
    ``real_folder``), with their tsvs and durations tsvs."""
    write_desed_set(root / "audio/train/synthetic21_train/soundscapes_16k",
                    root / "metadata/train/synthetic21_train/soundscapes.tsv", DESED_SYNTH)
    meta = root / "metadata/validation/synthetic21_validation"
    write_desed_set(root / "audio/validation/synthetic21_validation/soundscapes_16k",
                    meta / "soundscapes.tsv", DESED_SYNTH_VAL, meta / "durations.tsv")
    real = {clip: (seconds, real_rate, events)
            for clip, (seconds, _, events) in DESED_REAL.items()}
    write_desed_set(root / real_folder, root / "metadata/validation/validation.tsv", real,
                    root / "metadata/validation/validation_durations.tsv",
                    DESED_REAL_DURATIONS)
    return root


SR = 16_000


def write_corpus(root, speakers=("19", "26", "32", "40"), test_speakers=("84",)):
    rng = np.random.default_rng(0)
    for subset, group in (("train-clean-5", speakers), ("dev-clean-2", test_speakers)):
        for speaker in group:
            chapter = "1000"
            folder = root / "LibriSpeech" / subset / speaker / chapter
            folder.mkdir(parents=True)
            lines = []
            for n in range(2):
                utterance = f"{speaker}-{chapter}-{n:04d}"
                t = np.arange(int(3.0 * SR)) / SR
                voice = np.sin(2 * np.pi * 150 * t) * (np.sin(2 * np.pi * 2 * t) > 0)
                soundfile.write(folder / f"{utterance}.flac",
                                0.5 * voice + 0.001 * rng.standard_normal(len(t)), SR)
                lines.append(f"{utterance} HELLO WORLD")
            (folder / f"{speaker}-{chapter}.trans.txt").write_text("\n".join(lines) + "\n")
    return root
