#!/usr/bin/env python
"""Download and extract the MAESTRO Real development set (Zenodo record 7244360:
development_annotation.zip, development_audio.zip), then prepare the hard reference, the
durations and the soft labels for ``sedcontract audit``. Needs internet; nothing in the tests
or default paths calls the download.

    python scripts/fetch_maestro_real.py --dest data/maestro_real
    python train.py data=maestro_real            # data.root defaults to data/maestro_real

``--annotations-only`` skips the audio archive (enough to audit systems' outputs). Each
archive's sha256 is checked against ``--sha256 NAME=HEX`` when given; otherwise the first
successful fetch records it in ``DEST/checksums.json`` and later runs must match it. Extraction
takes regular files and folders only, all members or none, bounded by ``--max-bytes`` and
``--max-ratio`` (see ``sedcontract.data.fetch``); errors exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from sedcontract.cli.command import reported
from sedcontract.data.fetch import add_limit_options, expected_sha256, fetch, named_sha256_arg
from sedcontract.data.maestro import read_corpus, write_corpus_files

URL = "https://zenodo.org/records/7244360/files/{name}?download=1"
ARCHIVES = ("development_annotation.zip", "development_audio.zip")


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", default="data/maestro_real", type=Path)
    parser.add_argument("--annotations-only", action="store_true",
                        help="skip development_audio.zip (durations come from the last "
                             "annotated segment then)")
    parser.add_argument("--sha256", action="append", default=[], type=named_sha256_arg,
                        metavar="NAME=HEX",
                        help="NAME=HEX expected checksum, e.g. development_audio.zip=…")
    parser.add_argument("--keep-archives", action="store_true",
                        help="keep the archives this run downloads")
    add_limit_options(parser)
    args = parser.parse_args(argv)
    expected = expected_sha256(parser, args.sha256, ARCHIVES)
    archives = ARCHIVES[:1] if args.annotations_only else ARCHIVES
    for name in archives:
        fetch(URL.format(name=name), args.dest, name,
              expected=expected.get(name), keep=args.keep_archives,
              max_bytes=args.max_bytes, max_ratio=args.max_ratio)
    corpus = read_corpus(args.dest)
    written = write_corpus_files(args.dest / "prepared", corpus)
    print(f"ready: {len(corpus.durations)} files, {len(corpus.reference)} reference events of "
          f"{len(corpus.soft.classes)} classes (durations: {corpus.duration_source})")
    print("audit a system: sedcontract audit --ref " + " --durations ".join(
        str(p) for p in written[:2]) + " --pred <events.tsv>")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The script; a mistake ends with one line and status 2, as the CLI's do."""
    return reported("fetch_maestro_real", run, argv)


if __name__ == "__main__":
    sys.exit(main())
