"""CSV files with a checked header, the one reader of the tables this project writes and
reads back (report rows, sweep rows, protocol tables): UTF-8 text (a byte-order mark is not
text), records with their line numbers, and errors that name the file, line and column."""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Sequence
from pathlib import Path

from sedcontract.errors import TraceFormatError
from sedcontract.traces.tsv import regular_file


def read_text(path: str | Path) -> str:
    """A text file as UTF-8 (a byte-order mark is not text); errors name the byte and line."""
    try:
        data = regular_file(Path(path)).read_bytes()
    except OSError as exc:
        raise TraceFormatError(f"cannot read ({exc.strerror})", path=str(path)) from None
    body = data.removeprefix(codecs.BOM_UTF8)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start + len(data) - len(body)
        raise TraceFormatError(f"not UTF-8 text ({exc.reason} at byte {at})", path=str(path),
                               row=data.count(b"\n", 0, at) + 1) from None


def check_columns(header: Sequence[str], columns: Sequence[str], path: str | Path,
                  what: str) -> None:
    """Refuse a header that lacks one of ``columns`` or names one twice; ``what`` says which
    rows and which command writes them."""
    missing = [c for c in columns if c not in header]
    if missing:
        raise TraceFormatError(f"missing column(s) {', '.join(missing)}; {what} have "
                               f"{', '.join(columns)}", path=str(path), row=1)
    twice = [c for c in columns if list(header).count(c) > 1]
    if twice:
        raise TraceFormatError(f"the header names column {twice[0]!r} twice", path=str(path),
                               row=1, column=twice[0])


def read_csv(path: str | Path, columns: Sequence[str], what: str
             ) -> list[tuple[int, dict[str, str]]]:
    """The records of a CSV file whose header names ``columns`` (see :func:`check_columns`) as
    ``(line, {column: text})``; blank lines are skipped, a record of another length is
    refused."""
    return csv_records(read_text(path), path, columns, what)


def csv_records(text: str, path: str | Path, columns: Sequence[str], what: str,
                wanted: Sequence[str] | None = None) -> list[tuple[int, dict[str, str]]]:
    """:func:`read_csv` of a file's text; ``wanted`` (default ``columns``) are the columns
    each record holds, those beyond ``columns`` optional (blank when the header lacks them)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    records = []
    try:
        header = next(reader, [])
        check_columns(header, columns, path, what)
        twice = [c for c in wanted or () if header.count(c) > 1]
        if twice:
            raise TraceFormatError(f"the header names column {twice[0]!r} twice",
                                   path=str(path), row=1, column=twice[0])
        at = {c: header.index(c) for c in wanted or columns if c in header}
        for record in reader:
            if record and len(record) != len(header):
                raise TraceFormatError(f"{len(record)} fields; the header has {len(header)}",
                                       path=str(path), row=reader.line_num)
            if record:
                records.append((reader.line_num, {c: record[i] for c, i in at.items()}))
    except csv.Error as exc:
        raise TraceFormatError(f"not CSV ({exc})", path=str(path), row=reader.line_num) \
            from None
    return records
