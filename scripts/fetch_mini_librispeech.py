#!/usr/bin/env python
"""Download and extract Mini LibriSpeech (openslr resource 31: train-clean-5, dev-clean-2) for
the controlled benchmark's speech source. Needs internet; nothing in the tests or default paths
calls the download.

    python scripts/fetch_mini_librispeech.py --dest data/mini_librispeech
    sedcontract data build controlled --librispeech-root data/mini_librispeech

Each archive's sha256 is checked against ``--sha256 NAME=HEX`` when given; otherwise the first
successful fetch records it in ``DEST/checksums.json`` and later runs must match it. Extraction
takes regular files and folders inside DEST only, all members or none, bounded by
``--max-bytes`` and ``--max-ratio`` (see ``sedcontract.data.fetch``), then the layout is
verified; errors exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from sedcontract.cli.command import reported
from sedcontract.data.fetch import add_limit_options, expected_sha256, fetch, named_sha256_arg
from sedcontract.data.librispeech import split_utterances

BASE_URL = "https://www.openslr.org/resources/31"
ARCHIVES = ("train-clean-5", "dev-clean-2")


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", default="data/mini_librispeech", type=Path)
    parser.add_argument("--sha256", action="append", default=[], type=named_sha256_arg,
                        metavar="NAME=HEX",
                        help="NAME=HEX expected checksum, e.g. train-clean-5=…")
    parser.add_argument("--keep-archives", action="store_true",
                        help="keep the archives this run downloads (ones already there are "
                        "always kept)")
    add_limit_options(parser)
    args = parser.parse_args(argv)
    expected = expected_sha256(parser, args.sha256, ARCHIVES)
    for name in ARCHIVES:
        fetch(f"{BASE_URL}/{name}.tar.gz", args.dest, f"{name}.tar.gz",
              expected=expected.get(name), keep=args.keep_archives,
              max_bytes=args.max_bytes, max_ratio=args.max_ratio)
    splits = split_utterances(args.dest)
    print("ready: " + ", ".join(f"{k} {len(v)} utterances" for k, v in splits.items()))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The script; a mistake ends with one line and status 2, as the CLI's do."""
    return reported("fetch_mini_librispeech", run, argv)


if __name__ == "__main__":
    sys.exit(main())
