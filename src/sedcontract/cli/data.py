"""``sedcontract data pathologies | build | maestro``: calibration sets, the controlled
benchmark, and MAESTRO Real's soft labels as DCASE files."""

from __future__ import annotations

import argparse
from pathlib import Path

from sedcontract.cli.command import Command, given
from sedcontract.data import pathologies
from sedcontract.data.options import SPEECH_SOURCES, SPLITS
from sedcontract.errors import SedContractError
from sedcontract.outputs import Named, Outputs
from sedcontract.traces import read_durations, read_events


def _run_pathologies(args: argparse.Namespace, out: Outputs) -> int:
    from sedcontract.data import PATHOLOGIES, pathology_set
    from sedcontract.data.pathologies import pathology_files

    chosen = None  # checked before anything is read
    if args.pathologies:
        chosen = {}
        for name in args.pathologies.split(","):
            if name not in PATHOLOGIES:
                raise SedContractError(f"unknown pathology {name!r}; known: "
                                       f"{', '.join(PATHOLOGIES)}")
            chosen[name] = PATHOLOGIES[name]
    ref = read_events(args.ref)
    durations = read_durations(args.durations) if args.durations else None
    data = pathology_set(ref, durations, seed=args.seed, pathologies=chosen)
    for name, text in pathology_files(data).items():
        out.write(Path(args.out) / name, text)
    if data.unchanged:
        print("left out, the corruption found no room in the clip (the prediction would equal "
              "the reference): " + ", ".join(f"{k} {v}" for k, v in data.unchanged.items()))
    folder = Path(args.out)
    print(f"{len(data.labels)} corrupted clips from {len(ref.clips)} reference clips; audit "
          f"them with: sedcontract audit --ref {folder / 'ref.tsv'} --pred "
          f"{folder / 'pred.tsv'} --durations {folder / 'durations.tsv'} --format csv")
    return 0


def _pathologies_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    parser.add_argument("--durations", default=None, help="clip durations (tsv)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pathologies", default=None,
                        help="comma-separated subset of the pathologies (default: all; "
                             "docs/pathologies.md)")


def _run_build(args: argparse.Namespace, out: Outputs) -> int:
    from sedcontract.data.build import build_controlled  # the generator: imported when used

    sizes = {"train": args.train, "validation": args.validation, "test": args.test}
    build_controlled(args.root, seed=args.seed, sizes=sizes, speech_source=args.speech_source,
                     librispeech_root=args.librispeech_root, rebuild=args.rebuild)
    return 0


def _build_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=("controlled",), help="which benchmark")
    parser.add_argument("--root", default="data", help="data root (default: data/)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train", type=int, default=SPLITS["train"])
    parser.add_argument("--validation", type=int, default=SPLITS["validation"])
    parser.add_argument("--test", type=int, default=SPLITS["test"])
    parser.add_argument("--speech-source", choices=SPEECH_SOURCES, default="auto",
                        help="auto: a local Mini LibriSpeech copy when given, else synthetic")
    parser.add_argument("--librispeech-root", default=None,
                        help="folder holding LibriSpeech/train-clean-5 and dev-clean-2")
    parser.add_argument("--rebuild", action="store_true",
                        help="replace a benchmark built there with other settings (refused "
                             "otherwise, naming them)")


def _run_maestro(args: argparse.Namespace, out: Outputs) -> int:
    from sedcontract.data.maestro import FILES, corpus_files, read_corpus

    corpus = read_corpus(args.root, soft=args.soft, classes=args.classes,
                         durations=args.durations)
    folder = Path(args.out)
    for name, text in corpus_files(corpus).items():
        out.write(folder / name, text)
    events = len(corpus.reference)
    print(f"{len(corpus.durations)} files, {len(corpus.soft.classes)} classes, {events} hard "
          f"reference events (soft > 0.5); durations: {corpus.duration_source}"
          + (f"; {corpus.soft.duplicates} repeated annotation row(s) ignored"
             if corpus.soft.duplicates else ""))
    ref, durations, soft = (folder / FILES[k] for k in ("reference", "durations", "soft"))
    print(f"audit a system with: sedcontract audit --ref {ref} --durations {durations} "
          f"--pred <events.tsv> (or --pred-scores <dir> [--windows] [--class-map <map.tsv>]); "
          f"add --soft {soft} for the vector by annotation confidence (and, with --format "
          "csv, the report's softness and confidence rows)")
    return 0


def _maestro_options(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--root", default=None, help="the extracted development set "
                        "(development_annotation/, development_audio/)")
    source.add_argument("--soft", default=None, help="a soft-label tsv instead (filename onset "
                        "offset event_label confidence)")
    parser.add_argument("--classes", choices=("evaluated", "all"), default="evaluated",
                        help="the 11 classes DCASE evaluates (default) or all 17")
    parser.add_argument("--durations", default=None,
                        help="file durations (tsv) for files whose audio is not there")
    parser.add_argument("--out", required=True, help="output folder")


def _maestro_reads(args: argparse.Namespace) -> Named:
    from sedcontract.data.maestro import index_corpus

    tree = [f.annotation for f in index_corpus(args.root)] if args.root else []
    return {"--root": tree, "--soft": args.soft, "--durations": args.durations}


def _maestro_writes(args: argparse.Namespace) -> Named:
    from sedcontract.data.maestro import FILES

    return {"--out": [Path(args.out) / name for name in FILES.values()]}


COMMANDS = [
    Command("pathologies", "corrupt a reference into predictions with known pathologies at "
            "graded severity", _pathologies_options, _run_pathologies,
            lambda a: {"--ref": a.ref, "--durations": a.durations},
            lambda a: {"--out": [Path(a.out) / name for name in pathologies.FILES]},
            creates=lambda a: [a.out]),
    Command("build", "build a benchmark deterministically from a seed", _build_options,
            _run_build, lambda a: {"--librispeech-root": given(a.librispeech_root)},
            folders=lambda a: {"--root": Path(a.root) / a.name}),
    Command("maestro", "MAESTRO Real soft labels → hard reference (soft > 0.5), durations and "
            "soft-label tsv files", _maestro_options, _run_maestro, _maestro_reads,
            _maestro_writes, creates=lambda a: [a.out]),
]
