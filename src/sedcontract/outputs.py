"""Safe output files: every write goes to a fresh temporary file beside the target and is then
renamed over it, so a failed or interrupted command leaves the old file (or none), never half
of one, and never touches a file it did not create.

Policy (docs/guard-report.md, "Output files"): an empty path, a directory, anything that is not
a regular file (a device, a pipe, a socket) and any file the same command reads are refused; a
symbolic link is written through (its target file is replaced, the link stays). A command
declares what it reads and writes (:class:`Outputs`): before any work, an output that is an
input, two outputs that are one file and a replaced folder that holds an input are refused;
all outputs are staged and put in place together, so a failed run changes nothing.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType

from sedcontract.errors import SedContractError

PathLike = str | os.PathLike
Named = Mapping[str, "PathLike | Iterable[PathLike | None] | None"]  # option name -> path(s)


class OutputError(SedContractError):
    """An output path that cannot or must not be written."""


def _same(a: Path, b: PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist: compare where they would be
        return a == Path(os.path.realpath(b))


def check_output(path: PathLike, *, inputs: Iterable[PathLike | None] = (),
                 make_parents: bool = False) -> Path:
    """The file that writing ``path`` replaces (symbolic links resolved), after refusing what
    must not be written. ``inputs`` are the files the same command reads; with
    ``make_parents`` missing folders above it may be created."""
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
    folder = target.parent
    while make_parents and not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise OutputError(f"cannot write {text}: the folder {folder} {what}")
    return target


def _named(paths: Named | Iterable[PathLike | None]) -> list[tuple[str, PathLike]]:
    """(option, path) pairs of a declaration; absent (None) paths are left out."""
    if not isinstance(paths, Mapping):
        paths = {"": paths}
    pairs = []
    for name, value in paths.items():
        values = [value] if value is None or isinstance(value, str | os.PathLike) else value
        pairs += [(name, p) for p in values if p is not None]
    return pairs


def _holds(folder: Path, path: PathLike) -> bool:
    inner = Path(os.path.realpath(path))
    return inner == folder or folder in inner.parents


def guard(*, reads: Named | Iterable[PathLike | None] = (),
          writes: Named | Iterable[PathLike | None] = (),
          folders: Named | Iterable[PathLike | None] = (),
          creates: Iterable[PathLike] = ()) -> dict[Path, str]:
    """Refuse, before any work, what would lose a file: an output that is an input, two outputs
    that are one file, a folder the command replaces that holds an input. An output's folder
    must exist unless it lies in one of ``creates``. Returns each output's resolved target with
    the option that named it."""
    inputs = [(name, p) for name, p in _named(reads) if os.fspath(p) != ""]
    made = [Path(os.path.realpath(p)) for p in creates]
    targets: dict[Path, str] = {}
    for option, path in _named(writes):
        parents = any(_holds(folder, Path(os.path.realpath(path)).parent) for folder in made)
        target = check_output(path, make_parents=parents)
        for name, source in inputs:
            if _same(target, source):
                named = f"{name} {os.fspath(source)}".strip()
                raise OutputError(f"cannot write {os.fspath(path)}: it is also an input of this "
                                  f"command ({named}); choose another output path")
        label = f"{option} {os.fspath(path)}".strip()
        if target in targets:
            raise OutputError(f"{targets[target]} and {label} name the same file: one output "
                              "would replace the other; give each its own path")
        targets[target] = label
    for option, path in _named(folders):
        folder = Path(os.path.realpath(path))
        if folder.exists() and not folder.is_dir():
            raise OutputError(f"cannot write the folder {os.fspath(path)}: a file of that name "
                              f"is there ({option or 'output'}); move it or choose another "
                              "folder")
        for name, source in inputs:
            if _holds(folder, source):
                raise OutputError(f"cannot write the folder {os.fspath(path)}: it holds "
                                  f"{os.fspath(source)}, an input of this command "
                                  f"({name or 'input'}); choose another folder")
        for target, label in targets.items():
            if _holds(folder, target):
                raise OutputError(f"{label} lies inside the folder {os.fspath(path)} that "
                                  f"{option or 'the command'} replaces")
    return targets


def current_umask() -> int:
    """The process umask, read without changing it."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _stage(target: Path, data: str | bytes, shown: PathLike, anchor: Path) -> Path:
    """A fresh temporary file in ``anchor`` (an existing folder on the target's file system)
    holding ``data`` (text is UTF-8), with the mode the target will have."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~current_umask()
    try:
        fd, temporary = tempfile.mkstemp(dir=anchor, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"cannot write {os.fspath(shown)}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.chmod(temporary, mode)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {os.fspath(shown)}: {exc.strerror}") from None
        raise
    return Path(temporary)


def _existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


class Outputs:
    """The outputs of one command, declared with its inputs before any work (:func:`guard`;
    ``folders`` are replaced whole, ``creates`` are folders outputs may be made in):
    each write is staged beside its target and :meth:`commit` puts all of them in place, so a
    failed or refused run changes nothing. Used as a context manager, it commits on success
    and discards on any exception."""

    def __init__(self, *, reads: Named | Iterable[PathLike | None] = (),
                 writes: Named | Iterable[PathLike | None] = (),
                 folders: Named | Iterable[PathLike | None] = (),
                 creates: Iterable[PathLike] = ()) -> None:
        self._targets = guard(reads=reads, writes=writes, folders=folders, creates=creates)
        self._folders = {Path(os.path.realpath(p)): p for _, p in _named(folders)}
        self._files: dict[Path, tuple[Path, PathLike]] = {}
        self._trees: dict[Path, tuple[Path, PathLike]] = {}

    def write(self, path: PathLike, data: str | bytes) -> None:
        """Stage ``data`` for the declared output ``path``."""
        target = Path(os.path.realpath(path))
        if target not in self._targets:
            raise ValueError(f"{os.fspath(path)} is not a declared output of this command")
        if target in self._files:
            raise ValueError(f"{os.fspath(path)} is written twice by this command")
        self._files[target] = (_stage(target, data, path, _existing(target.parent)), path)

    def folder(self, path: PathLike, files: Mapping[str, str | bytes]) -> None:
        """Stage the whole folder ``path`` (declared in ``folders``) holding ``files`` (relative
        names); committing replaces a folder that is there."""
        target = Path(os.path.realpath(path))
        if target not in self._folders or target in self._trees:
            raise ValueError(f"{os.fspath(path)} is not a declared output folder, or is "
                             "written twice")
        anchor = _existing(target.parent)
        try:
            staged = Path(tempfile.mkdtemp(dir=anchor, prefix=f".{target.name}.", suffix=".tmp"))
        except OSError as exc:
            raise OutputError(f"cannot write {os.fspath(path)}: {exc.strerror}") from None
        try:
            os.chmod(staged, 0o777 & ~current_umask())
            for name, data in files.items():
                inner = staged / name
                if not _holds(staged, inner) or inner == staged:
                    raise ValueError(f"{name!r} leaves the folder {os.fspath(path)}")
                inner.parent.mkdir(parents=True, exist_ok=True)
                os.replace(_stage(inner, data, Path(path) / name, inner.parent), inner)
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise
        self._trees[target] = (staged, path)

    def commit(self) -> list[PathLike]:
        """Put every staged output in place; returns the paths as the command named them."""
        done: list[PathLike] = []
        try:
            for target, (staged, shown) in list(self._files.items()):
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staged, target)
                del self._files[target]
                done.append(shown)
            for target, (staged, shown) in list(self._trees.items()):
                _swap(staged, target)
                del self._trees[target]
                done.append(shown)
        except OSError as exc:
            self.discard()
            before = f" (already in place: {', '.join(map(str, done))})" if done else ""
            raise OutputError(f"cannot write {exc.filename or 'an output'}: {exc.strerror}"
                              f"{before}") from None
        return done

    def discard(self) -> None:
        """Remove everything staged; the outputs stay as they were."""
        for staged, _ in self._files.values():
            staged.unlink(missing_ok=True)
        for staged, _ in self._trees.values():
            shutil.rmtree(staged, ignore_errors=True)
        self._files.clear()
        self._trees.clear()

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 trace: TracebackType | None) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def _swap(staged: Path, target: Path) -> None:
    """Put the staged folder at ``target``; a folder there is replaced, and restored if the
    rename fails."""
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, target)
        return
    old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old.",
                                suffix=".tmp"))
    os.rmdir(old)
    os.replace(target, old)
    try:
        os.replace(staged, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def atomic_write(path: PathLike, data: str | bytes, *,
                 inputs: Iterable[PathLike | None] = ()) -> Path:
    """Write ``data`` (text is UTF-8) to ``path`` atomically; returns ``path``. An existing file
    keeps its permissions; a new one gets the usual ``0666 & ~umask``."""
    target = check_output(path, inputs=inputs)
    staged = _stage(target, data, path, target.parent)
    try:
        os.replace(staged, target)
    except BaseException as exc:
        staged.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {os.fspath(path)}: {exc.strerror}") from None
        raise
    return Path(path)
