"""Safe output files: every write goes to a fresh temporary file beside the target and is then
renamed over it, so a failed or interrupted command leaves the old file (or none), never half
of one, and never touches a file it did not create.

Policy (docs/guard-report.md, "Output files"): an empty path, a directory, anything that is not
a regular file (a device, a pipe, a socket) and any file the same command reads are refused; a
symbolic link is written through (its target file is replaced, the link stays).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from sedcontract.errors import SedContractError

PathLike = str | os.PathLike


class OutputError(SedContractError):
    """An output path that cannot or must not be written."""


def _same(a: Path, b: PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist: compare where they would be
        return a == Path(os.path.realpath(b))


def check_output(path: PathLike, *, inputs: Iterable[PathLike | None] = ()) -> Path:
    """The file that writing ``path`` replaces (symbolic links resolved), after refusing what
    must not be written. ``inputs`` are the files the same command reads."""
    text = os.fspath(path)
    if text == "":
        raise OutputError("the output path is empty; give a file name (or leave the option "
                          "out to write to standard output)")
    target = Path(os.path.realpath(text))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise OutputError(f"cannot write {text}: {exc.strerror}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError(f"cannot write {text}: it is a directory; give a file name")
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputError(f"cannot write {text}: it is not a regular file (a device, pipe or "
                          "socket); give a regular file, or leave the option out to write to "
                          "standard output")
    for source in inputs:
        if source is not None and os.fspath(source) != "" and _same(target, source):
            raise OutputError(f"cannot write {text}: it is also an input of this command "
                              f"({os.fspath(source)}); choose another output path")
    if not target.parent.is_dir():
        raise OutputError(f"cannot write {text}: the folder {target.parent} does not exist")
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: PathLike, data: str | bytes, *,
                 inputs: Iterable[PathLike | None] = ()) -> Path:
    """Write ``data`` (text is UTF-8) to ``path`` atomically; returns ``path``. An existing file
    keeps its permissions; a new one gets the usual ``0666 & ~umask``."""
    target = check_output(path, inputs=inputs)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    try:
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                         suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"cannot write {os.fspath(path)}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {os.fspath(path)}: {exc.strerror}") from None
        raise
    return Path(path)
