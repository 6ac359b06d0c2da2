"""Downloading and extracting public archives safely, for the fetch scripts in ``scripts/``
(nothing in the tests or default paths downloads). Every failure is one ``SedContractError``.

- Checksums: the first successful fetch records the archive's sha256 in
  ``DEST/checksums.json``; later runs (and ``--sha256``, 64 hexadecimal digits) must match.
  A malformed record is an error naming its line and column, and is never overwritten.
- Downloads and records follow :func:`sedcontract.outputs.atomic_write`: a fresh temporary
  beside the target, renamed over it, mode ``0666 & ~umask``; a failure leaves no partial file.
- Extraction takes regular files and folders only: links, devices, FIFOs and paths leaving the
  destination are refused; set-uid/set-gid/sticky bits and owners are dropped (files belong
  to the current user, mode ``mode & 0o777 & ~umask``, owner read/write kept).
- It is atomic: members go into a fresh temporary folder (inside DEST, or beside it when DEST
  does not exist yet) and are moved into place only once every member succeeded; a refused or
  corrupt member leaves DEST as it was.
- Existing paths: a member may replace only a file that an earlier extraction wrote, as listed
  in ``DEST/extracted.json`` (so reruns and archives sharing files work); any other existing
  file, a symbolic link on the way, or a file where a folder goes is refused, naming both.
- Size: the expanded total may not exceed ``max_bytes`` (16 GiB), nor ``max_ratio`` (100)
  times the archive's size once above ``ratio_floor`` (16 MiB). Declared sizes are checked
  first and bytes counted while extracting. Audio (WAV, FLAC) barely compresses and text
  rarely passes 20x, while a deflate bomb reaches ~1000x.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import lzma
import os
import shutil
import stat
import string
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.numbers import is_number, is_whole
from sedcontract.outputs import atomic_write, check_output, current_umask
from sedcontract.traces.documents import read_json
from sedcontract.traces.tsv import regular_file

CHECKSUMS = "checksums.json"
MANIFEST = "extracted.json"
MAX_BYTES = 16 << 30
MAX_RATIO = 100.0
RATIO_FLOOR = 16 << 20
TIMEOUT_S = 60.0
BLOCK = 1 << 20
# what a broken archive or a failing disk raises while reading or writing members
READ_ERRORS = (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, zlib.error,
               lzma.LZMAError, RuntimeError, NotImplementedError, ValueError)
SPECIAL = {stat.S_IFLNK: "a symbolic link", stat.S_IFCHR: "a character device",
           stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}
TAR_SPECIAL = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link",
               tarfile.CHRTYPE: "a character device", tarfile.BLKTYPE: "a block device",
               tarfile.FIFOTYPE: "a FIFO"}

# one archive member: name, "file" / "folder" / why it is refused, declared size, mode, opener
Member = tuple[str, str, int, int, Callable[[], IO[bytes]]]


def sha256_hex(text: str) -> str:
    """``text`` as a lowercase sha256, refusing anything but 64 hexadecimal digits."""
    value = text.strip().lower()
    if len(value) != 64 or not set(value) <= set(string.hexdigits):
        raise SedContractError(f"{text!r} is not a sha256 (64 hexadecimal digits)")
    return value


def sha256_arg(text: str) -> str:
    """argparse ``type`` of ``--sha256 HEX``."""
    try:
        return sha256_hex(text)
    except SedContractError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def named_sha256_arg(text: str) -> tuple[str, str]:
    """argparse ``type`` of ``--sha256 NAME=HEX``."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=HEX (an archive name, '=', "
                                         "64 hexadecimal digits)")
    return name, sha256_arg(value)


def expected_sha256(parser: argparse.ArgumentParser, pairs: list[tuple[str, str]],
                    names: tuple[str, ...]) -> dict[str, str]:
    """The ``--sha256 NAME=HEX`` pairs as a dict; an unknown NAME is a usage error (exit 2)."""
    for name, _ in pairs:
        if name not in names:
            parser.error(f"--sha256 {name}=…: unknown archive; expected one of "
                         + ", ".join(names))
    return dict(pairs)


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """``--max-bytes`` and ``--max-ratio``, the bounds of :func:`extract`."""
    parser.add_argument("--max-bytes", type=_max_bytes, default=MAX_BYTES,
                        help=f"refuse an archive expanding to more bytes (default {MAX_BYTES})")
    parser.add_argument("--max-ratio", type=_max_ratio, default=MAX_RATIO,
                        help="refuse an archive expanding to more than this many times its "
                        f"size, once above {RATIO_FLOOR} bytes (default {MAX_RATIO:g})")


def _max_bytes(text: str) -> int:
    try:
        return check_limits(int(text), MAX_RATIO)[0]
    except (ValueError, SedContractError) as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def _max_ratio(text: str) -> float:
    try:
        return check_limits(MAX_BYTES, float(text))[1]
    except (ValueError, SedContractError) as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def check_limits(max_bytes: object, max_ratio: object) -> tuple[int, float]:
    """The bounds of :func:`extract`: a whole number of bytes >= 1 and a finite ratio > 0
    (NaN or infinity would overflow the limit's arithmetic)."""
    if not is_whole(max_bytes) or max_bytes < 1:
        raise SedContractError(f"max_bytes must be a whole number of bytes >= 1, got "
                               f"{max_bytes!r}")
    if not is_number(max_ratio) \
            or not 0 < max_ratio < float("inf"):
        raise SedContractError(f"max_ratio must be a finite number > 0, got {max_ratio!r}")
    return max_bytes, float(max_ratio)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def read_record(path: Path) -> dict:
    """The JSON object in ``path`` ({} when there is none); a malformed one is an error."""
    if not os.path.lexists(path):
        return {}
    try:
        value = read_json(path, "download record", max_bytes=None)
    except TraceFormatError as exc:
        raise SedContractError(f"{exc}; fix or delete it") from None
    except OSError as exc:
        raise SedContractError(f"cannot read {path}: {exc.strerror}") from None
    if not isinstance(value, dict):
        raise SedContractError(f"{path}: expected a JSON object; fix or delete it")
    return value


def verify(path: Path, name: str, expected: str | None, record: Path, *,
           save: bool = True) -> str:
    """Compare the archive's sha256 with ``expected`` or the one recorded in ``record`` (a
    JSON file beside the data); record it unless ``save`` is false."""
    wanted = sha256_hex(expected) if expected is not None else None
    known = read_record(record)
    wanted = wanted or known.get(name)
    try:
        actual = sha256_of(regular_file(path))  # a pipe would block the reader
    except OSError as exc:
        raise SedContractError(f"cannot read {path}: {exc.strerror}") from None
    if wanted is not None and str(wanted).lower() != actual:
        raise SedContractError(f"{path}: sha256 {actual} does not match the expected {wanted};"
                               " delete the file and download again")
    if save:
        save_record(record, name, actual)
    return actual


def save_record(record: Path, name: str, value: object) -> None:
    """Set ``name`` in the JSON object of ``record``, written atomically."""
    known = read_record(record)
    known[name] = value
    atomic_write(record, json.dumps(known, indent=2, sort_keys=True) + "\n")


def _parts(name: str) -> list[str] | None:
    """A member's path as parts, or None when it leaves the destination."""
    path = name.replace("\\", "/")  # a separator in zips written on Windows
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return None if path.startswith("/") or ".." in parts else parts


def _zip_members(zf: zipfile.ZipFile) -> Iterator[Member]:
    for info in zf.infolist():
        mode = info.external_attr >> 16
        kind = SPECIAL.get(stat.S_IFMT(mode), "not a regular file or folder")
        if stat.S_IFMT(mode) in (0, stat.S_IFREG, stat.S_IFDIR):
            kind = "folder" if info.is_dir() or stat.S_ISDIR(mode) else "file"
        default = 0o777 if kind == "folder" else 0o666
        yield (info.filename, kind, info.file_size, stat.S_IMODE(mode) or default,
               lambda info=info: zf.open(info))


def _tar_members(tar: tarfile.TarFile) -> Iterator[Member]:
    for m in tar:
        kind = ("file" if m.isreg() else "folder" if m.isdir()
                else TAR_SPECIAL.get(m.type, "not a regular file or folder"))
        yield m.name, kind, m.size, m.mode, lambda m=m: tar.extractfile(m)


def _limit(compressed: int, max_bytes: int, max_ratio: float, floor: int) -> tuple[int, str]:
    """The most bytes an archive may expand to, and why."""
    by_ratio = max(floor, int(max_ratio * compressed))
    if by_ratio < max_bytes:
        return by_ratio, (f"{max_ratio:g} times its {compressed} compressed bytes; a larger "
                          "max_ratio (--max-ratio on the fetch scripts) allows it")
    return max_bytes, "max_bytes; a larger --max-bytes on the fetch scripts allows it"


class _Extraction:
    """One extraction into a temporary folder: checks each member, then moves all into place."""

    def __init__(self, archive: Path, dest: Path, limit: tuple[int, str]) -> None:
        self.archive, self.dest, self.limit = archive, dest, limit
        self.manifest = read_record(dest / MANIFEST) if dest.is_dir() else {}
        if not all(isinstance(files, list) and all(isinstance(p, str) for p in files)
                   for files in self.manifest.values()):
            raise SedContractError(f"{dest / MANIFEST}: expected a list of file names per "
                                   "archive; fix or delete it")
        self.ours = {p for files in self.manifest.values() for p in files}
        self.seen: set[str] = set()
        self.written: set[str] = set()
        self.declared = self.counted = 0
        self.mask = current_umask()
        try:
            self.temp = Path(tempfile.mkdtemp(dir=dest if dest.is_dir() else dest.parent,
                                              prefix=f".{archive.name}.", suffix=".extracting"))
        except OSError as exc:
            raise SedContractError(f"cannot extract {archive} into {dest}: {exc.strerror}") \
                from None

    def refuse(self, name: str, why: str) -> SedContractError:
        return SedContractError(f"{self.archive}: refusing member {name!r} ({why})")

    def too_big(self) -> SedContractError:
        return SedContractError(f"{self.archive}: expands to more than {self.limit[0]} bytes "
                                f"({self.limit[1]})")

    def check(self, name: str, kind: str, parts: list[str] | None) -> None:
        """Refuse a member that is not a file or folder, leaves DEST or clashes with it."""
        if kind not in ("file", "folder"):
            raise self.refuse(name, f"{kind}; only regular files and folders are extracted")
        if parts is None:
            raise self.refuse(name, "its path leaves the destination")
        if len(parts) == 1 and parts[0] in (CHECKSUMS, MANIFEST):
            raise self.refuse(name, "the name is reserved for the fetch's own records")
        key = "/".join(parts)
        if kind == "file" and key in self.seen:
            raise self.refuse(name, "it appears twice in the archive")
        self.seen.add(key)
        for depth in range(1, len(parts) + 1):
            there = self.dest.joinpath(*parts[:depth])
            try:
                mode = os.lstat(there).st_mode
            except FileNotFoundError:
                return
            except OSError as exc:
                raise self.refuse(name, f"cannot inspect {there}: {exc.strerror}") from None
            if stat.S_ISLNK(mode):
                raise self.refuse(name, f"{there} is a symbolic link; it is not followed")
            last = depth == len(parts)
            if not last or kind == "folder":
                if not stat.S_ISDIR(mode):
                    raise self.refuse(name, f"{there} exists and is not a folder")
            elif not stat.S_ISREG(mode) or key not in self.ours:
                raise self.refuse(name, f"{there} exists and was not written by an extraction "
                                  f"(not in {MANIFEST}); move or delete it first")

    def add(self, member: Member) -> None:
        """Check one member and write it under the temporary folder, counting its bytes."""
        name, kind, size, mode, opener = member
        parts = _parts(name)
        self.check(name, kind, parts)
        if not parts:
            return
        target = self.temp.joinpath(*parts)
        if kind == "folder":
            target.mkdir(parents=True, exist_ok=True)
            os.chmod(target, mode & 0o777 & ~self.mask | 0o700)
            return
        self.declared += size
        if self.declared > self.limit[0]:
            raise self.too_big()
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out, opener() as source:
            while block := source.read(BLOCK):
                self.counted += len(block)
                if self.counted > self.limit[0]:
                    raise self.too_big()
                out.write(block)
        os.chmod(target, mode & 0o777 & ~self.mask | 0o600)
        self.written.add("/".join(parts))

    def run(self, members: Iterator[Member]) -> None:
        """Add every member, then record and move them into place."""
        where = "its first member"
        try:
            for member in members:
                where = repr(member[0])
                self.add(member)
                where = f"the member after {member[0]!r}"
        except SedContractError:
            raise
        except READ_ERRORS as exc:
            why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            if isinstance(exc, (EOFError, tarfile.ReadError, zlib.error, lzma.LZMAError)):
                why = f"truncated or corrupt: {why}"
            raise SedContractError(f"{self.archive}: cannot extract {where} ({why})") from None
        try:
            self.dest.mkdir(parents=True, exist_ok=True)
            files = set(self.manifest.get(self.archive.name, [])) | self.written
            save_record(self.dest / MANIFEST, self.archive.name, sorted(files))
            _merge(self.temp, self.dest)
        except OSError as exc:
            raise SedContractError(f"{self.archive}: cannot move the extracted files into "
                                   f"{self.dest} ({exc.strerror})") from None


def _merge(source: Path, target: Path) -> None:
    """Move ``source``'s entries into ``target``, descending into folders both have."""
    for entry in source.iterdir():
        there = target / entry.name
        if entry.is_dir() and there.is_dir() and not there.is_symlink():
            _merge(entry, there)
        else:
            os.replace(entry, there)


def extract(archive: Path, dest: Path, *, max_bytes: int = MAX_BYTES,
            max_ratio: float = MAX_RATIO, ratio_floor: int = RATIO_FLOOR) -> None:
    """Extract a tar (any compression) or zip archive into ``dest`` by the rules of the module
    docstring: all members or none, regular files and folders only, bounded in size."""
    archive, dest = Path(archive), Path(dest).resolve()
    check_limits(max_bytes, max_ratio)
    try:
        compressed = regular_file(archive).stat().st_size  # a pipe would block the reader
    except TraceFormatError as exc:
        raise SedContractError(f"{archive}: cannot read the archive ({exc.message})") from None
    except OSError as exc:
        raise SedContractError(f"{archive}: cannot read the archive ({exc.strerror})") from None
    if dest.exists() and not dest.is_dir():
        raise SedContractError(f"cannot extract {archive} into {dest}: it is not a folder")
    limit = _limit(compressed, max_bytes, max_ratio, ratio_floor)
    job = None
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                members = list(_zip_members(zf))
                job = _Extraction(archive, dest, limit)
                if sum(m[2] for m in members if m[1] == "file") > limit[0]:  # declared sizes
                    raise job.too_big()
                job.run(iter(members))
        else:
            with tarfile.open(archive) as tar:
                job = _Extraction(archive, dest, limit)
                job.run(_tar_members(tar))
    except SedContractError:
        raise
    except READ_ERRORS as exc:
        raise SedContractError(f"{archive}: not a readable tar or zip archive (truncated or "
                               f"corrupt: {exc})") from None
    finally:
        if job is not None:
            shutil.rmtree(job.temp, ignore_errors=True)


def download(url: str, target: Path) -> None:
    """Stream ``url`` into a fresh temporary file beside ``target``, then rename it: an
    interrupted download leaves no partial archive and touches no other file."""
    target = check_output(target)
    try:
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                         suffix=".tmp")
    except OSError as exc:
        raise SedContractError(f"cannot write {target}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT_S) as r:
            while block := r.read(BLOCK):
                out.write(block)
        os.chmod(temporary, 0o666 & ~current_umask())
        os.replace(temporary, target)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, urllib.error.HTTPError):
            raise SedContractError(f"cannot download {url}: HTTP {exc.code} {exc.reason}") \
                from None
        if isinstance(exc, (OSError, ValueError, http.client.HTTPException)):
            why = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
            raise SedContractError(f"cannot download {url}: {why}") from None
        raise


def fetch(url: str, dest: Path, filename: str, *, expected: str | None = None,
          keep: bool = False, max_bytes: int = MAX_BYTES, max_ratio: float = MAX_RATIO,
          log=print) -> None:
    """Download ``url`` as ``dest/filename`` unless it is there, check its sha256, extract it
    into ``dest``, then record the sha256 in ``dest/checksums.json``. An archive this call
    downloaded is removed after a successful extraction unless ``keep``; one there already, or
    one whose extraction failed, is kept (delete it to download again)."""
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SedContractError(f"cannot create {dest}: {exc.strerror}") from None
    read_record(dest / CHECKSUMS)  # a malformed record stops the run before any download
    archive = dest / filename
    downloaded = not archive.exists()
    if downloaded:
        log(f"downloading {url}")
        download(url, archive)
    digest = verify(archive, filename, expected, dest / CHECKSUMS, save=False)
    log(f"{filename}: sha256 {digest}")
    extract(archive, dest, max_bytes=max_bytes, max_ratio=max_ratio)
    save_record(dest / CHECKSUMS, filename, digest)
    if downloaded and not keep:
        archive.unlink()
