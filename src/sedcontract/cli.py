"""Command line: ``sedcontract demo`` and ``sedcontract check``.

User mistakes (bad files, bad contracts) print one clear message and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from sedcontract.contracts import (
    ROUNDINGS,
    check_contract,
    contract_hash,
    evaluate_contract,
    format_contract,
    load_contract,
)
from sedcontract.errors import SedContractError
from sedcontract.traces import EDGES, MODES, PROJECTIONS, TraceSet, read_durations, read_events

EXAMPLES = Path(__file__).parent / "examples"


def _frame_vector(args: argparse.Namespace) -> str:
    """Run the frame clauses of a contract on a reference/prediction pair; a Markdown table."""
    ref, pred = read_events(args.ref), read_events(args.pred)
    durations = read_durations(args.durations) if args.durations else None
    traces = TraceSet.from_events(ref, pred, hop=args.hop, durations=durations,
                                  projection=args.projection)
    contract = load_contract(args.contract)
    overrides = {"eps": args.eps} if args.eps is not None else None
    results = {}
    for mode in MODES:
        signals, lengths = traces.signals(mode)
        results[mode] = evaluate_contract(contract, signals, hop=args.hop, overrides=overrides,
                                          rounding=args.rounding, edges=args.edges,
                                          lengths=lengths)
    names = list(results["typed"].clauses)
    lines = ["| trace | " + " | ".join(names) + " | logic |",
             "|---" * (len(names) + 2) + "|"]
    for mode, result in results.items():
        cells, scores = [], []
        for name in names:
            clause = result[name]
            if clause.vacuous:
                cells.append("vacuous (0/0)")
            else:
                cells.append(f"{clause.score:.3f} ({clause.satisfied}/{clause.obligations})")
                scores.append(clause.score)
        logic = f"{sum(scores) / len(scores):.3f}" if scores else "vacuous"
        lines.append(f"| {mode} | " + " | ".join(cells) + f" | {logic} |")
    conversions = "; ".join(str(c) for c in results["typed"].conversions) or "none"
    policy = [
        f"contract: {args.contract} (sha256 {contract_hash(contract)[:12]})",
        f"grid: hop {args.hop:g} s, projection {args.projection}, clip edges {args.edges}, "
        f"bound rounding {args.rounding}",
        f"bounds: {conversions}",
        f"clips: {len(traces.clips)}, classes: {', '.join(traces.classes) or 'none'}; events "
        f"lost to projection: ref {traces.vanished['ref']}, pred {traces.vanished['pred']}",
        "logic = mean of the non-vacuous coordinates, shown after the vector, never instead.",
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(policy)


def _cmd_demo(args: argparse.Namespace) -> int:
    args.ref = EXAMPLES / "demo_ref.tsv"
    args.pred = EXAMPLES / "demo_pred.tsv"
    args.durations = EXAMPLES / "demo_durations.tsv"
    print(f"Reference:  {args.ref}\nPrediction: {args.pred}\n")
    print(_frame_vector(args))
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    contract = load_contract(args.contract)
    conversions = check_contract(contract, hop=args.hop, rounding=args.rounding)
    print(format_contract(contract), end="")
    print(f"# ok: {len(contract.clauses)} clause(s), sha256 {contract_hash(contract)}")
    for conversion in conversions:
        print(f"# {conversion}")
    return 0


def _grid_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hop", type=float, default=0.02, help="grid hop in seconds (0.02)")
    parser.add_argument("--rounding", choices=ROUNDINGS, default="nearest",
                        help="how time bounds become whole frames (nearest)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sedcontract", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the standard contract on the shipped example")
    demo.add_argument("--contract", default="standard", help="shipped name or .contract file")
    demo.add_argument("--eps", default=None, help="override the contract's eps, e.g. 100ms")
    demo.add_argument("--projection", choices=PROJECTIONS, default="center")
    demo.add_argument("--edges", choices=EDGES, default="open")
    _grid_options(demo)
    demo.set_defaults(run=_cmd_demo)
    check = sub.add_parser("check", help="parse and check a contract, print its canonical text")
    check.add_argument("contract", help="shipped name (standard) or a .contract file")
    _grid_options(check)
    check.set_defaults(run=_cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except SedContractError as exc:
        print(f"sedcontract: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
