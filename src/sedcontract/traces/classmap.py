"""An explicit class-name mapping from a system's vocabulary to the reference's: a tsv with
header ``source target``, one source class per row; target ``-`` drops the class. Every
class a system outputs must be named (mapped or dropped): nothing is renamed or lost by
guess. Several sources may map to one target (events are then merged by the audit, scores
take the maximum)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.traces.events import EventList
from sedcontract.traces.tsv import read_fields

DROP = "-"


@dataclass(frozen=True)
class ClassMap:
    """``source → target`` (None: dropped), and where each source was declared."""

    targets: dict[str, str | None]
    path: str = "<class map>"
    rows: dict[str, int] | None = None

    @property
    def kept(self) -> tuple[str, ...]:
        """The target classes, in the order of their first source."""
        return tuple(dict.fromkeys(t for t in self.targets.values() if t is not None))

    def target(self, source: str, *, path: str | None, row: int | None = None,
               column: str | None = None) -> str | None:
        """The target of ``source`` (None: dropped); an unnamed class is an error naming where
        it was found."""
        if source not in self.targets:
            raise TraceFormatError(
                f"class {source!r} is not in the class map {self.path} (it names "
                f"{', '.join(map(repr, list(self.targets)[:6]))}"
                f"{' …' if len(self.targets) > 6 else ''}); add a row '{source}\t<target>' or "
                f"'{source}\t{DROP}' to drop it", path=path, row=row, column=column)
        return self.targets[source]

    def events(self, events: EventList) -> EventList:
        """The events renamed to their targets; dropped classes are left out. Rows, files
        and clips are kept, so later errors still name the system's file and row."""
        keep, labels = [], []
        for i, label in enumerate(events.label.tolist()):
            where = events.where(i)
            target = self.target(label, path=where.get("path"), row=where.get("row"),
                                 column="event_label")
            if target is not None:
                keep.append(i)
                labels.append(target)
        idx = np.asarray(keep, dtype=np.int64)
        return EventList(events.clip[idx], events.onset[idx], events.offset[idx],
                         np.asarray(labels, dtype=object), clips=events.clips, path=events.path,
                         rows=None if events.rows is None else events.rows[idx],
                         files=None if events.files is None else events.files[idx],
                         clip_rows=events.clip_rows)

    def columns(self, classes: Sequence[str], scores: np.ndarray, *, path: str
                ) -> tuple[tuple[str, ...], np.ndarray]:
        """Score columns ``[frames, classes]`` mapped to the targets: dropped columns are left
        out, several sources of one target give their maximum."""
        targets = [self.target(c, path=path, row=1, column=c) for c in classes]
        kept = tuple(dict.fromkeys(t for t in targets if t is not None))
        out = np.full((scores.shape[0], len(kept)), -np.inf)
        for j, target in enumerate(targets):
            if target is not None:
                k = kept.index(target)
                out[:, k] = np.maximum(out[:, k], scores[:, j])
        return kept, out


def read_class_map(path: str | Path) -> ClassMap:
    """Read a class-map tsv (``source target``; ``-`` drops); errors name the file and row."""
    path = Path(path)
    numbered = read_fields(path)
    if not numbered or [f.lower() for f in numbered[0][1]] != ["source", "target"]:
        raise TraceFormatError("a class map starts with the header 'source<TAB>target'",
                               path=str(path), row=numbered[0][0] if numbered else 1)
    targets: dict[str, str | None] = {}
    rows: dict[str, int] = {}
    for line, fields in numbered[1:]:
        if len(fields) != 2 or not all(fields):
            raise TraceFormatError(f"expected 'source<TAB>target' (target {DROP} drops the "
                                   f"class), got {len(fields)} field(s)", path=str(path),
                                   row=line)
        source, target = fields
        if source in targets:
            raise TraceFormatError(f"class {source!r} is mapped twice (first on row "
                                   f"{rows[source]})", path=str(path), row=line,
                                   column="source")
        targets[source] = None if target == DROP else target
        rows[source] = line
    if not any(t is not None for t in targets.values()):
        raise TraceFormatError("the class map keeps no class", path=str(path))
    return ClassMap(targets, str(path), rows)
