#!/usr/bin/env python
"""Download and extract Mini LibriSpeech (openslr resource 31: train-clean-5, dev-clean-2) for
the controlled benchmark's speech source. Needs internet; nothing in the tests or default paths
calls the download.

    python scripts/fetch_mini_librispeech.py --dest data/mini_librispeech
    sedcontract data build controlled --librispeech-root data/mini_librispeech

Each archive's sha256 is checked against ``--sha256 NAME=HEX`` when given; otherwise the first
download records it in ``DEST/checksums.json`` and later runs must match it. Extraction refuses
members that would land outside DEST, then the layout is verified.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from sedcontract.data.librispeech import split_utterances
from sedcontract.outputs import atomic_write

BASE_URL = "https://www.openslr.org/resources/31"
ARCHIVES = ("train-clean-5", "dev-clean-2")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(path: Path, name: str, expected: str | None, record: Path) -> str:
    """Compare the archive's sha256 with ``expected`` or the recorded one; record it."""
    actual = sha256_of(path)
    known = json.loads(record.read_text()) if record.exists() else {}
    wanted = expected or known.get(name)
    if wanted is not None and wanted != actual:
        raise SystemExit(f"{path}: sha256 {actual} does not match the expected {wanted}; "
                         "delete the file and download again")
    known[name] = actual
    atomic_write(record, json.dumps(known, indent=2, sort_keys=True) + "\n")
    return actual


def extract(archive: Path, dest: Path) -> None:
    """Extract a tar.gz into ``dest``, refusing links and paths that leave ``dest``."""
    dest = dest.resolve()
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            target = (dest / member.name).resolve()
            if not (target == dest or dest in target.parents) or member.issym() \
                    or member.islnk():
                raise SystemExit(f"{archive}: refusing member {member.name!r} (outside the "
                                 "destination or a link)")
        tar.extractall(dest)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", default="data/mini_librispeech", type=Path)
    parser.add_argument("--sha256", action="append", default=[],
                        help="NAME=HEX expected checksum, e.g. train-clean-5=…")
    parser.add_argument("--keep-archives", action="store_true",
                        help="keep the archives this run downloads (ones already there are "
                        "always kept)")
    args = parser.parse_args(argv)
    expected = dict(item.split("=", 1) for item in args.sha256)
    args.dest.mkdir(parents=True, exist_ok=True)
    for name in ARCHIVES:
        archive = args.dest / f"{name}.tar.gz"
        downloaded = not archive.exists()  # an archive that was there already is kept
        if downloaded:
            print(f"downloading {BASE_URL}/{name}.tar.gz")
            download(f"{BASE_URL}/{name}.tar.gz", archive)
        digest = verify(archive, name, expected.get(name), args.dest / "checksums.json")
        print(f"{name}: sha256 {digest}")
        extract(archive, args.dest)
        if downloaded and not args.keep_archives:
            archive.unlink()

    splits = split_utterances(args.dest)
    print("ready: " + ", ".join(f"{k} {len(v)} utterances" for k, v in splits.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
