"""The source files of a committed results page: CSV rows and the run's record, read with
errors that name the file (and row), written together with the page rendered from their text,
and the page rendered again from them."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sedcontract.errors import ProtocolError, TraceFormatError
from sedcontract.experiments.row_checks import check_rows
from sedcontract.outputs import Outputs, atomic_write
from sedcontract.traces import documents
from sedcontract.traces.csv_files import read_csv

Tables = dict[str, list[dict[str, str]]]
Render = Callable[[Tables, Mapping[str, Any]], str]


def read_json(path: Path, what: str) -> dict[str, Any]:
    """A JSON object from a file (read safely: :mod:`~sedcontract.traces.documents`), or one
    line naming the file."""
    try:
        value = documents.read_json(path, "protocol file")
    except TraceFormatError as exc:
        raise ProtocolError(f"{path}: cannot read {what} ({exc.message})") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"{path}: {what} must be a JSON object, not {type(value).__name__}")
    return value


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Rows as CSV text with ``columns`` (other keys left out), one ``\\n`` a line."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n",
                            extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def read_tables(paths: Mapping[str, Path], columns: Mapping[str, Sequence[str]], page: str,
                source: str, systems: Sequence[str]) -> Tables:
    """Each source file's records (``columns``: key → its columns), checked
    (:func:`~sedcontract.experiments.row_checks.check_rows`: ``systems`` are the round's); a
    missing file is named as the key's part of ``page``, a bad row as the rows of ``source``
    (the script writing them)."""
    found = {}
    for key, names in columns.items():
        if not paths[key].is_file():
            raise ProtocolError(f"{paths[key]} does not exist (the {key} of {page})")
        found[key] = check_rows(paths[key], read_csv(paths[key], names,
                                                     f"the {key} of {source}"), systems, source)
    return found


def run_record(path: Path, *, absent_is_incomplete: bool = False) -> dict[str, Any]:
    """The run's record beside a page: its command and split at least. A missing file is
    unreadable, or with ``absent_is_incomplete`` an incomplete record."""
    meta = None if absent_is_incomplete and not path.is_file() else \
        read_json(path, "the run's record")
    if meta is None or not isinstance(meta.get("command"), str) or \
            meta.get("split") not in ("validation", "test"):
        raise ProtocolError(f"{path}: the run's record (its command and split) is "
                         "missing or incomplete")
    return meta


def write_tables(paths: Mapping[str, Path], columns: Mapping[str, Sequence[str]],
                 tables: Mapping[str, Sequence[Mapping[str, Any]]], meta: Mapping[str, Any],
                 render: Render) -> str:
    """The source files, the run's record and the page rendered from the files' text (as
    ``render_again`` reads them), all put in place together; the page."""
    texts = {key: csv_text(tables[key], names) for key, names in columns.items()}
    texts["meta"] = json.dumps(meta, indent=2) + "\n"
    parsed = {key: [{c: r[c] for c in names} for r in csv.DictReader(io.StringIO(texts[key]))]
              for key, names in columns.items()}
    page = render(parsed, meta)
    with Outputs(writes=paths) as staged:
        for key, text in texts.items():
            staged.write(paths[key], text)
        staged.write(paths["page"], page)
    return page


def render_again(paths: Mapping[str, Path], tables: Tables, meta: Mapping[str, Any],
                 render: Render) -> str:
    """The page rendered from its source files and written over the old one; the page."""
    text = render(tables, meta)
    atomic_write(paths["page"], text, inputs=[p for k, p in paths.items() if k != "page"])
    return text
