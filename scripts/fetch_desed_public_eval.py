#!/usr/bin/env python
"""Download and extract the DESED public evaluation set (Zenodo record 4560759:
DESED_public_eval.tar.gz: 10 s clips, strong labels of the 10 DESED classes), find its
ground-truth tsv and write the clips' durations beside it. Needs internet; nothing in the
tests or default paths calls the download.

    python scripts/fetch_desed_public_eval.py --dest data/desed_public_eval
    sedcontract audit --ref <ground truth> --durations <durations> --clips durations --pred …

Each archive's sha256 is checked against ``--sha256 HEX`` when given; otherwise the first
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
from sedcontract.data.desed import locate, write_durations_of
from sedcontract.data.fetch import add_limit_options, fetch, sha256_arg

URL = "https://zenodo.org/records/4560759/files/DESED_public_eval.tar.gz?download=1"
ARCHIVE = "DESED_public_eval.tar.gz"


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", default="data/desed_public_eval", type=Path)
    parser.add_argument("--sha256", default=None, type=sha256_arg, metavar="HEX",
                        help="expected sha256 of the archive (64 hexadecimal digits)")
    parser.add_argument("--keep-archives", action="store_true",
                        help="keep the archive this run downloads")
    add_limit_options(parser)
    args = parser.parse_args(argv)
    fetch(URL, args.dest, ARCHIVE, expected=args.sha256, keep=args.keep_archives,
          max_bytes=args.max_bytes, max_ratio=args.max_ratio)
    truth, audio = locate(args.dest)
    durations = write_durations_of(audio, args.dest / "durations.tsv")
    print(f"ready: ground truth {truth}, {durations} clips in {audio}")
    print(f"audit a system: sedcontract audit --ref {truth} --durations "
          f"{args.dest / 'durations.tsv'} --clips durations --pred <events.tsv>")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The script; a mistake ends with one line and status 2, as the CLI's do."""
    return reported("fetch_desed_public_eval", run, argv)


if __name__ == "__main__":
    sys.exit(main())
