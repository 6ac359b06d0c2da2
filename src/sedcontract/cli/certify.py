"""``sedcontract certify``: per-class thresholds whose risks meet targets on new audio with
probability at least 1 − δ over the calibration clips (:mod:`~sedcontract.analysis.certify`),
written as a decision file that ``audit --decision`` applies, the guarantee inside it and
printed."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sedcontract.cli import options
from sedcontract.cli.audit_options import curve_targets, targets_file
from sedcontract.cli.command import Command, contract_read, given
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy
from sedcontract.outputs import Named, Outputs
from sedcontract.traces.score_files import score_files


def _delta(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: δ is a probability in (0, 1), e.g. 0.1")
    return value


def _classes(text: str | None) -> tuple[str, ...] | None:
    """``--classes Speech,Dog``: each class once, none empty."""
    if text is None:
        return None
    names = tuple(c.strip() for c in text.split(","))
    if not all(names) or len(set(names)) != len(names):
        raise SedContractError(f"--classes {text!r}: name each class once, separated by commas")
    return names


@dataclass(frozen=True)
class CertifyRequest:
    """``certify``: calibration reference, durations and score files, the targets, δ, the
    grid and procedure, the unit, the policy (its decision gives the median filters), and
    the decision file to write."""

    ref: str
    durations: str
    pred_scores: str
    targets: str
    delta: float
    thresholds: tuple[float, ...] | None
    procedure: str
    groups: str | None
    joint: bool
    classes: tuple[str, ...] | None
    policy: AuditPolicy
    decision_file: str | None
    out: str

    @classmethod
    def of(cls, args: argparse.Namespace) -> CertifyRequest:
        return cls(args.ref, args.durations, args.pred_scores, args.targets, args.delta,
                   args.thresholds, args.procedure, args.groups, args.joint,
                   _classes(args.classes),
                   options.policy(args, decision=options.decision(args)), args.decision,
                   args.out)

    def target_values(self) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
        """Every class's targets and the classes' own (a file may give both)."""
        if targets_file(self.targets):
            from sedcontract.analysis.certify import read_target_file

            return read_target_file(self.targets).mappings()
        return dict(curve_targets(self.targets, "--targets") or ()), {}

    def reads(self, contract: list[Path]) -> Named:
        return {"--ref": self.ref, "--durations": self.durations,
                "--pred-scores": score_files(self.pred_scores), "--contract": contract,
                "--targets": given(targets_file(self.targets)), "--groups": given(self.groups),
                "--decision": given(self.decision_file)}

    def writes(self) -> Named:
        return {"--out": self.out}


def _run(args: argparse.Namespace, out: Outputs) -> int:
    from sedcontract.analysis.certify import certify
    from sedcontract.traces.decision import decision_yaml
    from sedcontract.traces.tsv import read_groups

    request = CertifyRequest.of(args)
    every, own = request.target_values()
    certificate = certify(request.ref, request.pred_scores, request.durations, every,
                          delta=request.delta, policy=request.policy,
                          thresholds=request.thresholds, procedure=request.procedure,
                          groups=read_groups(request.groups) if request.groups else None,
                          joint=request.joint, classes=request.classes, class_targets=own)
    text = "\n".join(certificate.markdown()) + "\n"
    note = (f"sedcontract certify on {request.pred_scores} against {request.ref}, targets "
            f"{request.targets}\n" + text)
    out.write(request.out, decision_yaml(certificate.decided(), note,
                                         certificate=certificate.as_dict()))
    print(text, end="")
    return 0


def _options(parser: argparse.ArgumentParser) -> None:
    from sedcontract.analysis.certify import PROCEDURES

    parser.add_argument("--ref", required=True, help="calibration reference events (DCASE tsv)")
    parser.add_argument("--pred-scores", required=True,
                        help="calibration score files (sed_scores_eval layout, a folder)")
    parser.add_argument("--durations", required=True, help="clip durations (tsv)")
    parser.add_argument("--targets", required=True, metavar="C=S,...|YAML",
                        help="the least scores to certify, e.g. missed=0.8,false=0.8 (risk "
                             "1 - score), or a file: a risk order with targets "
                             "(src/sedcontract/examples/speech_gate.yaml) or just targets: "
                             "and classes: {CLASS: {coordinate: score}}")
    parser.add_argument("--delta", type=_delta, default=0.1,
                        help="the chance the guarantee may fail over the calibration draw "
                             "(default 0.1)")
    parser.add_argument("--thresholds", type=options.threshold_list, default=None,
                        help="the grid, fixed before the data: 0.2,0.5 or START:STOP:STEP "
                             "(default DESED_task's 50: 0.01, 0.03, …, 0.99)")
    parser.add_argument("--procedure", choices=PROCEDURES, default="auto",
                        help="multiple testing over the grid: fixed-sequence along each "
                             "coordinate's direction, Holm or Bonferroni over the grid "
                             "(default auto: fixed-sequence when every target has a direction, "
                             "else Holm)")
    parser.add_argument("--groups", default=None, metavar="FILE",
                        help="filename and group (tsv): the recording each clip was cut from; "
                             "groups, not clips, are then the independent unit")
    parser.add_argument("--joint", action="store_true",
                        help="one guarantee for all classes together (δ / classes each) "
                             "instead of one per class")
    parser.add_argument("--classes", default=None,
                        help="comma-separated classes to certify (default: every class)")
    parser.add_argument("--out", required=True,
                        help="the decision file to write (YAML; audit/scores --decision)")
    options.add_decision_options(parser)
    options.add_options(parser, AuditPolicy)


def _request(args: argparse.Namespace) -> Any:
    if args.decision_threshold is not None:
        raise SedContractError("--threshold: certify chooses the thresholds; give the median "
                               "filters with --median-filter or --decision")
    return CertifyRequest.of(args)


COMMANDS = [
    Command("certify", "per-class thresholds whose targets hold on new audio with probability "
            "at least 1 - delta, written as a decision file", _options,
            lambda a, out: (_request(a), _run(a, out))[1],
            lambda a: _request(a).reads(contract_read(a)),
            lambda a: _request(a).writes()),
]
