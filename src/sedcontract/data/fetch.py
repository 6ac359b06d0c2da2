"""Downloading public archives safely, for the fetch scripts in ``scripts/`` (nothing in the
tests or default paths downloads): checksums recorded on first download and checked after,
downloads that never leave a partial file, extraction that refuses links and paths leaving
the destination."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from sedcontract.errors import SedContractError
from sedcontract.outputs import atomic_write

CHECKSUMS = "checksums.json"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(path: Path, name: str, expected: str | None, record: Path) -> str:
    """Compare the archive's sha256 with ``expected`` or the one recorded in ``record`` (a
    JSON file beside the data); record it."""
    actual = sha256_of(path)
    known = json.loads(record.read_text()) if record.exists() else {}
    wanted = expected or known.get(name)
    if wanted is not None and wanted != actual:
        raise SedContractError(f"{path}: sha256 {actual} does not match the expected {wanted};"
                               " delete the file and download again")
    known[name] = actual
    atomic_write(record, json.dumps(known, indent=2, sort_keys=True) + "\n")
    return actual


def _inside(dest: Path, name: str) -> bool:
    target = (dest / name).resolve()
    return target == dest or dest in target.parents


def extract(archive: Path, dest: Path) -> None:
    """Extract a tar (any compression) or zip archive into ``dest``, refusing links and members
    whose path leaves ``dest``; nothing is extracted when one member is refused."""
    dest = dest.resolve()
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                link = stat.S_ISLNK(info.external_attr >> 16)
                if link or not _inside(dest, info.filename):
                    raise SedContractError(f"{archive}: refusing member {info.filename!r} "
                                           "(outside the destination or a link)")
            zf.extractall(dest)
        return
    try:
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.issym() or member.islnk() or not _inside(dest, member.name):
                    raise SedContractError(f"{archive}: refusing member {member.name!r} "
                                           "(outside the destination or a link)")
            tar.extractall(dest)
    except tarfile.ReadError as exc:
        raise SedContractError(f"{archive}: not a tar or zip archive ({exc})") from None


def download(url: str, target: Path) -> None:
    """Stream ``url`` into a fresh temporary file beside ``target``, then rename it: an
    interrupted download leaves no partial archive and touches no other file."""
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                     suffix=".tmp")
    try:
        with urllib.request.urlopen(url) as response, os.fdopen(fd, "wb") as out:
            while block := response.read(1 << 20):
                out.write(block)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def fetch(url: str, dest: Path, filename: str, *, expected: str | None = None,
          keep: bool = False, log=print) -> None:
    """Download ``url`` as ``dest/filename`` unless it is there, check its sha256 (recorded in
    ``dest/checksums.json``), extract it into ``dest``; an archive this call downloaded is
    removed afterwards unless ``keep`` (one that was there already is always kept)."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = dest / filename
    downloaded = not archive.exists()
    if downloaded:
        log(f"downloading {url}")
        download(url, archive)
    digest = verify(archive, filename, expected, dest / CHECKSUMS)
    log(f"{filename}: sha256 {digest}")
    extract(archive, dest)
    if downloaded and not keep:
        archive.unlink()
