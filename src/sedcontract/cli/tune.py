"""``sedcontract tune``: per-class thresholds and median filters tuned on validation score files
for a named objective, written as a decision file that ``audit``, ``scores``, ``evaluate.py``
and training validation read (``--decision FILE``, ``contract.decision.file=FILE``)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from sedcontract.cli import options
from sedcontract.cli.command import Command, contract_read, given
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, ScoreSettings
from sedcontract.outputs import Named, Outputs
from sedcontract.traces.score_files import score_files
from sedcontract.traces.times import seconds


def _filters(text: str) -> tuple[float, ...]:
    try:
        return tuple(seconds(v.strip(), "--median-filters") for v in text.split(","))
    except SedContractError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@dataclass(frozen=True)
class TuneRequest:
    """``tune``: validation reference, durations and score files, the objective and grid,
    the policy that measures, and the decision files to write."""

    ref: str
    durations: str | None
    pred_scores: str
    objective: str
    thresholds: tuple[float, ...]
    median_filters: tuple[float, ...]
    classes: tuple[str, ...] | None
    policy: AuditPolicy
    out: str
    global_out: str | None
    risk_order: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> TuneRequest:
        if (args.objective == "risk") != (args.risk_order is not None):
            raise SedContractError("--objective risk and --risk-order FILE go together: the "
                                   "objective is the mean of the order's high-risk kinds")
        return cls(args.ref, args.durations, args.pred_scores, args.objective,
                   args.thresholds, args.median_filters,
                   tuple(c.strip() for c in args.classes.split(",")) if args.classes else None,
                   options.policy(args, scores=True), args.out, args.global_out,
                   args.risk_order)

    def reads(self, contract: list[Path]) -> Named:
        return {"--ref": self.ref, "--durations": self.durations,
                "--pred-scores": score_files(self.pred_scores), "--contract": contract,
                "--risk-order": given(self.risk_order)}

    def writes(self) -> Named:
        return {"--out": self.out, "--global-out": given(self.global_out)}


def _run(args: argparse.Namespace, out: Outputs) -> int:
    from sedcontract.analysis.tuning import tune, tuning_markdown
    from sedcontract.traces.decision import decision_yaml

    request = TuneRequest.of(args)
    risk = None
    if request.risk_order is not None:
        from sedcontract.analysis.selection import read_risk_order
        from sedcontract.guard.pipeline import clause_names

        coordinates, diagnostics, _ = clause_names(request.policy.parsed)
        risk = read_risk_order(request.risk_order, [*coordinates, *diagnostics])
    tuning = tune(request.ref, request.pred_scores, request.durations, request.objective,
                  policy=request.policy, thresholds=request.thresholds,
                  median_filters=request.median_filters, classes=request.classes,
                  where=request.pred_scores, risk=risk)
    table = tuning_markdown(tuning)
    note = (f"sedcontract tune --objective {request.objective} on {request.pred_scores} "
            f"against {request.ref}\nvalidation macro {request.objective}: tuned "
            f"{tuning.macro('tuned'):.4f}, best single setting {tuning.macro('global'):.4f}")
    out.write(request.out, decision_yaml(tuning.decision, note))
    if request.global_out:
        out.write(request.global_out, decision_yaml(tuning.global_decision,
                                                    note + "\nthe best single setting"))
    print(table, end="")
    return 0


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ref", required=True, help="validation reference events (DCASE tsv)")
    parser.add_argument("--pred-scores", required=True,
                        help="validation score files (sed_scores_eval layout, a folder)")
    parser.add_argument("--durations", default=None, help="clip durations (tsv)")
    parser.add_argument("--objective", required=True,
                        help="what to maximise per class: event (collar F1), intersection, "
                             "segment or frame F1, a guard coordinate of the contract (onset, "
                             "offset, missed, false, silence, duration, fragmentation), "
                             "logic, or risk (the mean of --risk-order's high-risk kinds)")
    parser.add_argument("--risk-order", default=None, metavar="FILE",
                        help="with --objective risk: a risk order (YAML order and high, as "
                             "sedcontract select reads it) whose high-risk kinds are "
                             "coordinates or diagnostics of the contract")
    parser.add_argument("--thresholds", type=options.threshold_list, default=None,
                        help="candidate thresholds: 0.2,0.5 or START:STOP:STEP (default "
                             "0.1:0.9:0.1)")
    parser.add_argument("--median-filters", type=_filters, default=None,
                        help="candidate median filters with their unit: 0,100ms,200ms "
                             "(default 0,100ms,200ms,400ms)")
    parser.add_argument("--classes", default=None,
                        help="comma-separated classes to tune (default: the score columns)")
    parser.add_argument("--out", required=True,
                        help="the decision file to write (YAML; sedcontract audit/scores "
                             "--decision, evaluate.py contract.decision.file=)")
    parser.add_argument("--global-out", default=None,
                        help="also write the best single setting (the same for every class) "
                             "here, the control arm")
    options.add_options(parser, AuditPolicy)
    options.add_options(parser, ScoreSettings)


def _with_defaults(args: argparse.Namespace) -> argparse.Namespace:
    from sedcontract.analysis.tuning import DEFAULT_FILTERS, DEFAULT_THRESHOLDS

    if args.thresholds is None:
        args.thresholds = DEFAULT_THRESHOLDS
    if args.median_filters is None:
        args.median_filters = DEFAULT_FILTERS
    return args


COMMANDS = [
    Command("tune", "per-class thresholds and median filters tuned on validation scores for "
            "a named objective, written as a decision file", _options,
            lambda a, out: _run(_with_defaults(a), out),
            lambda a: TuneRequest.of(_with_defaults(a)).reads(contract_read(a)),
            lambda a: TuneRequest.of(_with_defaults(a)).writes()),
]
