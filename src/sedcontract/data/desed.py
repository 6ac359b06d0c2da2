"""DESED (DCASE Task 4 domestic sounds): 10 s clips, strong labels of 10 classes. The ground
truth is a DCASE event tsv naming only the clips that have events; the durations tsv names
them all (``sedcontract audit --clips durations``)."""

from __future__ import annotations

from pathlib import Path

from sedcontract.errors import SedContractError
from sedcontract.traces.tsv import EVENT_COLUMNS, read_fields, write_durations

CLASSES = ("Alarm_bell_ringing", "Blender", "Cat", "Dishes", "Dog",
           "Electric_shaver_toothbrush", "Frying", "Running_water", "Speech", "Vacuum_cleaner")


def locate(root: str | Path) -> tuple[Path, Path]:
    """The ground-truth tsv (the one event tsv under ``root``) and the audio folder (the one
    holding the most ``.wav`` files) of an extracted DESED archive."""
    root = Path(root)
    truths = []
    for path in sorted(root.rglob("*.tsv")):
        rows = read_fields(path)
        if rows and set(EVENT_COLUMNS) <= {f.lower() for f in rows[0][1]}:
            truths.append(path)
    if len(truths) != 1:
        raise SedContractError(f"expected one ground-truth tsv ({' '.join(EVENT_COLUMNS)}) under "
                               f"{root}, found {len(truths)}: "
                               f"{', '.join(str(p) for p in truths[:4]) or 'none'}")
    folders: dict[Path, int] = {}
    for wav in root.rglob("*.wav"):
        folders[wav.parent] = folders.get(wav.parent, 0) + 1
    if not folders:
        raise SedContractError(f"no .wav files under {root}")
    return truths[0], max(sorted(folders), key=folders.get)


def write_durations_of(audio: Path, path: Path) -> int:
    """Write the durations tsv of every ``.wav`` in ``audio``; returns how many."""
    import soundfile

    durations = {}
    for wav in sorted(audio.glob("*.wav")):
        try:
            durations[wav.stem] = float(soundfile.info(str(wav)).duration)
        except RuntimeError as exc:
            raise SedContractError(f"{wav}: cannot read audio ({exc})") from None
    write_durations(path, durations)
    return len(durations)
