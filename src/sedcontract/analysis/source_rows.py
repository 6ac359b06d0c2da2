"""Source rows (``audit --format csv``, the ``*_report.csv`` of runs) held as columns: each
text column as integer codes into its vocabulary, the counts as int64, so a report of a
million rows is a few numpy passes. Read by a fast path for the files this project writes and
the csv module for anything else (quoted fields, blank lines, carriage returns), checked the
same way either way: an error names the file, row and column."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from pathlib import Path
from typing import Any, overload

import numpy as np

from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.guard.render import MAX_COUNT, ROW_FIELDS, TEXT_FIELDS, VALUE_FIELD, row_counts
from sedcontract.guard.rows import (
    CORPUS,
    CURVE_PARTS,
    DRAWS,
    RANKING,
    SCHEMA_VERSION,
    SETTING,
    VERSION_SETTING,
    RowKind,
    metric_name,
    numbered,
)
from sedcontract.resampling import MAX_RESAMPLES
from sedcontract.traces import MODES
from sedcontract.traces.csv_files import check_columns, csv_records, read_text
from sedcontract.traces.tsv import given_files

__all__ = ["ROWS", "SourceRows", "read_rows"]

ROWS = "source rows (sedcontract audit --format csv)"
# the row layouts read here: version 1 wrote no version row, version 2 is the current one
READABLE_VERSIONS = tuple(str(v) for v in range(2, SCHEMA_VERSION + 1))
CHUNK_LINES = 50_000  # rows split at once by the fast path: bounds its transient memory


@dataclass(frozen=True)
class SourceRows(Sequence[dict[str, Any]]):
    """Rows as columns: ``codes[column]`` (int32) index ``vocab[column]`` for every text
    column; ``satisfied`` and ``obligations`` (int64; 0 on a ranking row, which has none);
    ``value`` (float64; NaN but on a ranking row); and apart, the ``settings`` rows as
    (system, policy) → setting → text. A sequence of row dicts too, so code that reads rows
    one by one still can."""

    vocab: dict[str, tuple[str, ...]]
    codes: dict[str, np.ndarray]
    satisfied: np.ndarray
    obligations: np.ndarray
    value: np.ndarray
    settings: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.satisfied)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> SourceRows: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | SourceRows:
        if isinstance(i, slice):
            return self.take(np.arange(len(self))[i])
        row: dict[str, Any] = {c: self.vocab[c][self.codes[c][i]] for c in TEXT_FIELDS}
        row["satisfied"], row["obligations"] = int(self.satisfied[i]), int(self.obligations[i])
        row[VALUE_FIELD] = float(self.value[i])
        return row

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[i] for i in range(len(self)))

    def take(self, which: np.ndarray) -> SourceRows:
        """The rows a boolean mask or an index array picks, vocabularies kept."""
        return SourceRows(self.vocab, {c: v[which] for c, v in self.codes.items()},
                          self.satisfied[which], self.obligations[which], self.value[which],
                          self.settings)

    def compact(self) -> SourceRows:
        """The same rows with every vocabulary holding only the texts some row uses (in their
        order), as if the rows left out had never been read."""
        vocab, codes = dict(self.vocab), dict(self.codes)
        for column, texts in self.vocab.items():
            used = np.bincount(self.codes[column], minlength=len(texts)) > 0
            if not used.all():
                vocab[column] = tuple(t for t, u in zip(texts, used, strict=True) if u)
                codes[column] = (np.cumsum(used) - 1).astype(np.int32)[self.codes[column]]
        return SourceRows(vocab, codes, self.satisfied, self.obligations, self.value,
                          self.settings)

    @classmethod
    def of(cls, rows: Iterable[dict[str, Any]]) -> SourceRows:
        """Columns of row dicts (counts as numbers; ``value`` optional, NaN when absent; a
        setting row's text goes to ``settings``)."""
        if isinstance(rows, SourceRows):
            return rows
        settings: dict[tuple[str, str], dict[str, str]] = {}
        counted = []
        for r in rows:
            if r["role"] == SETTING:
                _setting(settings, r)
            else:
                counted.append(r)
        rows = counted
        vocab: dict[str, tuple[str, ...]] = {}
        codes: dict[str, np.ndarray] = {}
        for column in TEXT_FIELDS:
            texts = [str(r[column]) for r in rows]
            index = {t: k for k, t in enumerate(dict.fromkeys(texts))}
            vocab[column] = tuple(index)
            codes[column] = np.fromiter(map(index.__getitem__, texts), np.int32, len(texts))

        def number(value: Any) -> float:
            return math.nan if value in (None, "") else float(value)

        return cls(vocab, codes,
                   np.array([int(r["satisfied"] or 0) for r in rows], dtype=np.int64),
                   np.array([int(r["obligations"] or 0) for r in rows], dtype=np.int64),
                   np.array([number(r.get(VALUE_FIELD)) for r in rows], dtype=np.float64),
                   settings)

    @staticmethod
    def concat(parts: Sequence[SourceRows]) -> SourceRows:
        """One table of several, vocabularies merged in order (a text's code is the order of
        its first row)."""
        if len(parts) == 1:
            return parts[0]
        vocab: dict[str, tuple[str, ...]] = {}
        codes: dict[str, np.ndarray] = {}
        for column in TEXT_FIELDS:
            index: dict[str, int] = {}
            mapped = []
            for part in parts:
                for text in part.vocab[column]:
                    index.setdefault(text, len(index))
                remap = np.array([index[t] for t in part.vocab[column]], dtype=np.int32)
                mapped.append(remap[part.codes[column]] if len(remap) else
                              np.zeros(0, dtype=np.int32))
            vocab[column], codes[column] = tuple(index), np.concatenate(mapped)
        settings: dict[tuple[str, str], dict[str, str]] = {}
        for part in parts:
            for key, found in part.settings.items():
                for name, text in found.items():
                    _setting(settings, {"system": key[0], "policy": key[1],
                                        "coordinate": name, VALUE_FIELD: text})
        return SourceRows(vocab, codes, *(np.concatenate([getattr(p, k) for p in parts])
                                          for k in ("satisfied", "obligations", "value")),
                          settings)


def _setting(settings: dict[tuple[str, str], dict[str, str]], row: Mapping[str, Any],
             again: bool = True) -> None:
    """Record a setting row; the same setting of one system and policy given two ways is
    refused (they would not be one measurement), and given twice at all unless ``again``
    (the rows of one file name each setting once)."""
    found = settings.setdefault((row["system"], row["policy"]), {})
    name, text = row["coordinate"], str(row[VALUE_FIELD])
    if not again and name in found:
        raise SedContractError(f"setting {name} of system {row['system']} (policy "
                               f"{row['policy']}) is given twice")
    if found.setdefault(name, text) != text:
        raise SedContractError(f"system {row['system']} (policy {row['policy']}) has two values "
                               f"of {name}: {found[name]!r} and {text!r}; rows of one system "
                               "and policy come from one measurement")


class _Columns:
    """Text columns coded as they are read, chunk by chunk, into one vocabulary each."""

    def __init__(self) -> None:
        self.index: dict[str, dict[str, int]] = {c: {} for c in TEXT_FIELDS}
        self.codes: dict[str, list[np.ndarray]] = {c: [] for c in TEXT_FIELDS}

    def add(self, column: str, texts: list[str]) -> np.ndarray:
        index = self.index[column]
        for text in dict.fromkeys(texts):
            index.setdefault(text, len(index))
        codes = np.fromiter(map(index.__getitem__, texts), np.int32, len(texts))
        self.codes[column].append(codes)
        return codes

    def done(self) -> tuple[dict[str, tuple[str, ...]], dict[str, np.ndarray]]:
        return ({c: tuple(i) for c, i in self.index.items()},
                {c: np.concatenate(v) if v else np.zeros(0, dtype=np.int32)
                 for c, v in self.codes.items()})


def _fast(text: str, path: Path) -> FileRows | None:
    """The rows of a file as this project writes it (no quotes, ``\\n`` line ends, no blank
    line, counts of at most 18 digits), with their line numbers; None for any other file,
    which :func:`_slow` reads and checks field by field."""
    if "\r" in text:
        return None
    head, _, body = text.partition("\n")
    if '"' in head:
        return None
    header = head.split(",")
    check_columns(header, ROW_FIELDS, path, ROWS)
    if len(set(header)) != len(header):
        return None  # check_columns refuses it in the slow path, by name
    body = body[:-1] if body.endswith("\n") else body
    if body.startswith("\n") or "\n\n" in body:
        return None
    width = len(header)
    at = {c: header.index(c) for c in header}
    columns = _Columns()
    counts: list[tuple[np.ndarray, np.ndarray]] = []
    values: list[np.ndarray] = []
    lines = body.split("\n") if body else []
    if lines and max(map(len, lines)) > csv.field_size_limit():
        return None  # the csv module names the field too long for it
    texts_of_settings: list[tuple[int, str]] = []  # (row, its text)
    for start in range(0, len(lines), CHUNK_LINES):
        chunk = lines[start:start + CHUNK_LINES]
        flat = _fields(chunk, width)
        if flat is None:
            return None
        codes = {c: columns.add(c, flat[at[c]::width]) for c in TEXT_FIELDS}
        ranking = codes["role"] == columns.index["role"].get(RANKING, -1)
        setting = codes["role"] == columns.index["role"].get(SETTING, -1)
        kept = (~(ranking | setting)).tolist()
        chunk_counts = _chunk_counts(flat, at, width, ranking | setting)
        if chunk_counts is None:
            return None
        counts.append(chunk_counts)
        value = np.full(len(chunk), math.nan)
        if VALUE_FIELD in at:
            texts = flat[at[VALUE_FIELD]::width]
            if any(compress(texts, kept)):
                return None
            for i in np.flatnonzero(ranking):
                number = _value(texts[i])
                if number is None:
                    return None
                value[i] = number
            texts_of_settings += [(start + int(i), texts[i]) for i in np.flatnonzero(setting)]
        elif ranking.any() or setting.any():
            return None
        values.append(value)
    vocab, codes = columns.done()
    if not set(vocab["mode"]) <= set(MODES):
        return None
    empty = np.zeros(0, dtype=np.int64)
    rows = SourceRows(vocab, codes,
                      np.concatenate([c[0] for c in counts]) if counts else empty,
                      np.concatenate([c[1] for c in counts]) if counts else empty,
                      np.concatenate(values) if values else np.zeros(0))
    line = np.arange(2, len(rows) + 2, dtype=np.int64)
    if not texts_of_settings:
        return FileRows(rows, line, {})
    return _with_settings(rows, line, texts_of_settings)


def _chunk_counts(flat: list[str], at: dict[str, int], width: int, uncounted: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """A chunk's satisfied and obligations as digits of at most 18, satisfied <= obligations,
    and blank on the ``uncounted`` (ranking and setting) rows; None for anything else."""
    kept = (~uncounted).tolist()
    parts = []
    for name in ("satisfied", "obligations"):
        texts = flat[at[name]::width]
        counted = list(compress(texts, kept))
        joined = "".join(counted)
        if counted and not (joined.isascii() and joined.isdigit()
                            and min(map(len, counted)) >= 1
                            and max(map(len, counted)) <= 18):
            return None
        if any(compress(texts, uncounted.tolist())):
            return None  # a ranking or setting row holds a value, no counts
        numbers = np.zeros(len(uncounted), dtype=np.int64)
        numbers[~uncounted] = np.array(counted, dtype=np.int64) if counted else 0
        parts.append(numbers)
    if np.any(parts[0] > parts[1]):
        return None
    return parts[0], parts[1]


def _with_settings(rows: SourceRows, line: np.ndarray, texts_of_settings: list[tuple[int, str]]
                   ) -> FileRows | None:
    """The rows without their setting rows, whose values (``texts_of_settings``: row, text)
    become the rows' settings, each with its line; None when one is refused (the slow path
    names it with its row)."""
    vocab, codes = rows.vocab, rows.codes
    settings: dict[tuple[str, str], dict[str, str]] = {}
    where: dict[tuple[str, str, str], int] = {}
    for i, text in texts_of_settings:
        row = {c: vocab[c][codes[c][i]] for c in ("system", "policy", "coordinate")}
        try:
            _setting(settings, row | {VALUE_FIELD: text}, again=False)
        except SedContractError:
            return None
        where[(row["system"], row["policy"], row["coordinate"])] = i + 2
    counted = codes["role"] != vocab["role"].index(SETTING)
    rows = rows.take(counted).compact()
    return FileRows(SourceRows(rows.vocab, rows.codes, rows.satisfied, rows.obligations,
                               rows.value, settings), line[counted], where)


def _fields(chunk: list[str], width: int) -> list[str] | None:
    """The fields of lines of ``width`` fields each, in order; a line with quotes is read
    by the csv module (a quoted field may hold commas, not a line break); None when a line
    has another number of fields."""
    joined = ",".join(chunk)
    commas = list(map(str.count, chunk, repeat(",")))
    if '"' not in joined:
        return joined.split(",") if commas.count(width - 1) == len(chunk) else None
    flat: list[str] = []
    for line, n in zip(chunk, commas, strict=True):
        if '"' in line:
            fields = next(csv.reader([line]), []) if line.count('"') % 2 == 0 else []
            if len(fields) != width:
                return None
            flat += fields
        elif n == width - 1:
            flat += line.split(",")
        else:
            return None
    return flat


def _value(text: str) -> float | None:
    """A ranking row's value: a finite number, else None."""
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def check_record(record: dict[str, str], path: str | Path, line: int) -> dict[str, Any]:
    """One row of text: a known mode; whole counts with ``0 <= satisfied <= obligations`` and
    no value, or, on a ranking row, a finite value and no counts."""
    row: dict[str, Any] = dict(record)
    if row["mode"] not in MODES:
        raise TraceFormatError(f"unknown mode {row['mode']!r}; modes are typed and union",
                               path=str(path), row=line, column="mode")
    text = row.get(VALUE_FIELD) or ""
    if row["role"] == SETTING:
        if VALUE_FIELD not in record:
            raise TraceFormatError(f"a setting row holds its text in the {VALUE_FIELD} column, "
                                   "which this file lacks", path=str(path), row=line,
                                   column=VALUE_FIELD)
        for name in ("satisfied", "obligations"):
            if row[name]:
                raise TraceFormatError(f"a setting row holds its text in {VALUE_FIELD}, not "
                                       f"in {name}", path=str(path), row=line, column=name)
        return row
    if row["role"] == RANKING:
        for name in ("satisfied", "obligations"):
            if row[name]:
                raise TraceFormatError(f"a ranking row holds its number in {VALUE_FIELD}, not "
                                       f"in {name}", path=str(path), row=line, column=name)
        number = _value(text)
        if number is None:
            raise TraceFormatError(f"{VALUE_FIELD} {text!r} of a ranking row is not a finite "
                                   "number", path=str(path), row=line, column=VALUE_FIELD)
        row["satisfied"], row["obligations"], row[VALUE_FIELD] = 0, 0, number
        return row
    row["satisfied"], row["obligations"] = row_counts(record, path, line)
    if text:
        raise TraceFormatError(f"{VALUE_FIELD} is for ranking rows (role {RANKING}); a count "
                               "row leaves it blank", path=str(path), row=line,
                               column=VALUE_FIELD)
    row[VALUE_FIELD] = math.nan
    return row


def _slow(records: Iterable[tuple[int, dict[str, str]]], path: Path) -> FileRows:
    """Records checked one by one (:func:`check_record`), then as columns."""
    checked, lines = [], []
    settings: dict[tuple[str, str], dict[str, str]] = {}
    where: dict[tuple[str, str, str], int] = {}
    for line, record in records:
        row = check_record(record, path, line)
        if row["role"] == SETTING:
            try:
                _setting(settings, row, again=False)
            except SedContractError as exc:
                raise TraceFormatError(str(exc), path=str(path), row=line,
                                       column=VALUE_FIELD) from None
            where[(row["system"], row["policy"], row["coordinate"])] = line
            continue
        checked.append(row)
        lines.append(line)
    rows = SourceRows.of(checked)
    return FileRows(SourceRows(rows.vocab, rows.codes, rows.satisfied, rows.obligations,
                               rows.value, settings), np.array(lines, dtype=np.int64), where)


@dataclass(frozen=True)
class FileRows:
    """One file's rows, each one's line, and the line of each setting."""

    rows: SourceRows
    lines: np.ndarray
    settings: dict[tuple[str, str, str], int]


def _file_rows(path: Path) -> FileRows:
    """A file's rows (CSV; Parquet when pyarrow is installed) and each one's line."""
    if path.suffix == ".parquet":
        return _slow(_parquet(path), path)
    text = read_text(path)
    fast = _fast(text, path)
    if fast is not None:
        return fast
    return _slow(csv_records(text, path, ROW_FIELDS, ROWS, (*ROW_FIELDS, VALUE_FIELD)), path)


def _parquet(path: Path) -> list[tuple[int, dict[str, str]]]:
    """Parquet records as the text CSV would hold (a null is an empty field), row 1 being the
    header as in CSV."""
    try:
        import pyarrow
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise SedContractError(f"{path}: reading Parquet needs pyarrow (pip install "
                               "pyarrow), or give the CSV rows") from exc
    try:
        table = pq.read_table(path)
        records = table.to_pylist()
    except (pyarrow.ArrowException, OSError, ValueError) as exc:
        raise TraceFormatError(f"not a Parquet file of source rows ({exc})",
                               path=str(path)) from None
    check_columns(table.column_names, ROW_FIELDS, path, ROWS)
    columns = [*ROW_FIELDS, *((VALUE_FIELD,) if VALUE_FIELD in table.column_names else ())]
    return [(line, {k: "" if r[k] is None else str(r[k]) for k in columns})
            for line, r in enumerate(records, start=2)]


def _files(paths: Iterable[str | Path]) -> list[Path]:
    """Rows files, and the ``*_report.csv`` files of run directories."""
    return given_files(paths, lambda folder: list(folder.rglob("*_report.csv")),
                       none_here="no *_report.csv source rows in this folder (a training or "
                       "evaluation run writes them)",
                       missing="no such rows file or run folder")


def _dense(key: np.ndarray, codes: np.ndarray, size: int) -> np.ndarray:
    """``key`` extended by one more column of codes, renumbered densely when it would grow
    past what int64 holds."""
    if len(key) and int(key.max()) + 1 > (2**62) // max(size, 1):
        key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return key * size + codes


def _settings(files: Sequence[Path], read: Sequence[FileRows]
              ) -> dict[tuple[str, str], dict[str, str]]:
    """Every file's settings, one system and policy's alike in every file that names them (a
    setting given two ways is refused, naming both rows); ``draws.seed`` and
    ``draws.resamples`` whole numbers, at most :data:`MAX_RESAMPLES` resamples."""
    merged: dict[tuple[str, str], dict[str, str]] = {}
    first: dict[tuple[str, str, str], tuple[Path, int]] = {}
    for path, found in zip(files, read, strict=True):
        for key, named in found.rows.settings.items():
            mine = merged.setdefault(key, {})
            for name, text in named.items():
                line = found.settings.get((*key, name), 0)
                if name in mine and mine[name] != text:
                    other = first[(*key, name)]
                    raise TraceFormatError(
                        f"{name} of system {key[0]} (policy {key[1]}) is {text!r} here and "
                        f"{mine[name]!r} in {other[0]} row {other[1]}: rows of one system and "
                        "policy come from one measurement", path=str(path), row=line,
                        column=VALUE_FIELD)
                mine[name] = text
                first.setdefault((*key, name), (path, line))
                if name in (f"setting:{DRAWS}.seed", f"setting:{DRAWS}.resamples") and not (
                        text.isascii() and text.isdigit() and len(text) < 19 and
                        (name.endswith(".seed") or 0 < int(text) <= MAX_RESAMPLES)):
                    raise TraceFormatError(
                        f"{name} {text!r} is not a whole number"
                        + ("" if name.endswith(".seed") else f" of 1 … {MAX_RESAMPLES:,}"),
                        path=str(path), row=line, column=VALUE_FIELD)
                if name == VERSION_SETTING and text not in READABLE_VERSIONS:
                    raise TraceFormatError(
                        f"rows of schema version {text}; this sedcontract reads versions "
                        f"{', '.join(READABLE_VERSIONS)} (docs/schema.md): write them again with "
                        "it", path=str(path), row=line, column=VALUE_FIELD)
    return merged


def _check_ranking(rows: SourceRows, where: Callable[[int], tuple[Path, int]]) -> None:
    """Each ranking row spelled as the audit writes it (:mod:`sedcontract.guard.
    summary_rows`), else refused by file, row and column: ``ranking:<metric>`` with a name of
    letters, digits and underscores, typed; a value at clip ``*``; a draw at clip
    ``resample:<r>`` (class ``*``, ``r`` below the system's ``draws.resamples``), in [0, 1]
    (PSDS, mAUC, mpAUC and the curves' areas all are); a staircase point at clip
    ``point:<k>`` of part ``efpr`` or ``tpr``."""
    v = rows.vocab
    if RANKING not in v["role"]:
        return
    for i in np.flatnonzero(rows.codes["role"] == v["role"].index(RANKING)):
        system, policy = v["system"][rows.codes["system"][i]], v["policy"][rows.codes["policy"][i]]
        coordinate, clip = v["coordinate"][rows.codes["coordinate"][i]], \
            v["clip"][rows.codes["clip"][i]]
        kind = RowKind.parse(coordinate)
        problem, column = None, "coordinate"
        if kind is None or kind.kind != RANKING or not metric_name(kind.name) or \
                kind.part not in ("", *CURVE_PARTS):
            problem = (f"coordinate {coordinate!r} of a ranking row: expected ranking:<metric>"
                       " (letters, digits, _) or ranking:<metric>/efpr or /tpr")
        elif v["mode"][rows.codes["mode"][i]] != "typed":
            problem, column = "a ranking row is of mode typed (the metric's own classes)", "mode"
        elif not kind.part and not 0 <= rows.value[i] <= 1:  # PSDS, AUROC, curve areas
            problem, column = (f"{coordinate} {rows.value[i]:g}: a ranking metric lies in "
                               "[0, 1]", VALUE_FIELD)
        elif kind.part:
            if numbered(clip, "point") is None:
                problem, column = (f"clip {clip!r} of a PSD-ROC point: expected point:<k>",
                                   "clip")
        elif clip != CORPUS:
            r = numbered(clip, "resample")
            resamples = rows.settings.get((system, policy), {}).get(
                f"setting:{DRAWS}.resamples")
            column = "clip"
            if r is None:
                problem = (f"clip {clip!r} of a ranking value: expected * or resample:<r> (r "
                           "in digits, no leading zero)")
            elif v["class"][rows.codes["class"][i]] != "*":
                problem, column = "a resample's draw is of the metric (class *)", "class"
            elif resamples is None or r >= int(resamples):
                problem = (f"draw {r} of {system}: the rows give "
                           + ("no setting:draws.resamples" if resamples is None else
                              f"setting:draws.resamples {resamples}"))
        if problem is not None:
            path, line = where(int(i))
            raise TraceFormatError(problem, path=str(path), row=line, column=column)


def read_rows(paths: Iterable[str | Path], *, several_policies: bool = False) -> SourceRows:
    """Source rows of every file, checked: all columns present, counts whole and ``0 <=
    satisfied <= obligations`` (a ranking row: a finite value instead), a known mode, no row
    given twice, one policy unless ``several_policies`` says otherwise, and sums that int64
    holds."""
    files = _files(paths)
    read = [_file_rows(path) for path in files]
    settings = _settings(files, read)
    rows = SourceRows.concat([f.rows for f in read]) if read else None
    if rows is None or not len(rows):
        raise SedContractError("the rows files hold no rows")
    rows = SourceRows(rows.vocab, rows.codes, rows.satisfied, rows.obligations, rows.value,
                      settings)
    lines = np.concatenate([f.lines for f in read])
    owner = np.repeat(np.arange(len(files)), [len(f.rows) for f in read])

    def where(i: int) -> tuple[Path, int]:
        return files[owner[i]], int(lines[i])

    _check_ranking(rows, where)

    key = np.zeros(len(rows), dtype=np.int64)
    for column in ("system", "policy", "mode", "clip", "class", "coordinate"):
        key = _dense(key, rows.codes[column], len(rows.vocab[column]))
    order = np.argsort(key, kind="stable")
    repeats = order[1:][key[order][1:] == key[order][:-1]]
    if len(repeats):
        later = int(repeats.min())
        first = int(np.flatnonzero(key == key[later])[0])
        path, line = where(later)
        first_path, first_line = where(first)
        raise TraceFormatError(f"this row repeats row {first_line} of {first_path} (same "
                               "system, policy, mode, clip, class and coordinate)",
                               path=str(path), row=line)
    policy = rows.codes["policy"]
    other = np.flatnonzero(policy != policy[0])
    if len(other) and not several_policies:
        path, line = where(int(other[0]))
        first_path, first_line = where(0)
        raise TraceFormatError(
            f"policy {rows.vocab['policy'][policy[other[0]]]} differs from policy "
            f"{rows.vocab['policy'][policy[0]]} of {first_path} row {first_line}: rows of several "
            "policies (another contract, eps, hop or matching) are compared only when asked "
            "(--several-policies)", path=str(path), row=line, column="policy")
    if len(rows) and int(rows.obligations.max()) > MAX_COUNT // len(rows) and \
            sum(map(int, rows.obligations)) > MAX_COUNT:
        raise SedContractError("the rows' obligations sum past 2^63 − 1: no report can add "
                               "them up exactly")
    return rows
