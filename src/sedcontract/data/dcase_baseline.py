"""The output format of the DCASE 2024 Task 4 baseline, audited as an external track: score
files of 0.064 s frames (16 kHz, hop 256, pooled by 4; 156 frames a 10 s clip, never trimmed)
with 27 class columns, the DESED classes then the MAESTRO Real ones; MAESTRO files are scored
in 10 s chunks every 5 s. The shipped class maps (``examples/dcase2024_{desed,maestro}.tsv``)
name these columns."""

from __future__ import annotations

from pathlib import Path

from sedcontract.data.desed import CLASSES as DESED_CLASSES
from sedcontract.data.maestro import CLASSES as MAESTRO_CLASSES

COLUMNS = (*DESED_CLASSES, *MAESTRO_CLASSES)
FRAME = 0.064      # seconds
FRAMES = 156       # per 10 s clip or chunk
CHUNK, CHUNK_HOP = 10.0, 5.0  # seconds: MAESTRO evaluation chunks
CLASS_MAPS = {track: Path(__file__).resolve().parents[1] / "examples" / f"dcase2024_{track}.tsv"
              for track in ("desed", "maestro")}
