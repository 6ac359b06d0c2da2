"""The options of ``sedcontract audit``, ``scores`` and ``demo`` and how their values are
read: PSDS scenarios, AUROC settings, the curves' thresholds and targets."""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from pathlib import Path

from sedcontract.analysis.audited import FORMATS
from sedcontract.cli import options
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, ScoreSettings
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings
from sedcontract.scores.segment_roc import AurocSettings
from sedcontract.traces import MODES
from sedcontract.traces.times import seconds
from sedcontract.traces.tsv import CLIP_LISTS

PSDS_PARAMETERS = {  # PsdsSettings field -> help of its --psds-* option
    "dtc": "PSDS detection tolerance criterion (default: the scenario's)",
    "gtc": "PSDS ground-truth intersection criterion",
    "cttc": "PSDS cross-trigger tolerance criterion",
    "alpha_ct": "PSDS weight of the cross-trigger rate in the effective FP rate",
    "alpha_st": "PSDS weight of the spread of TPR across classes",
    "max_efpr": "PSDS: the eFPR per hour up to which the area is taken",
}
DEFAULT_PSDS = "psds1,psds2"
AUROC_PARAMETERS = {  # AurocSettings field -> help of its --auroc-* option
    "segment_length": "segment-based AUROC: segment length with its unit, e.g. 1s or 500ms "
                      "(default 1s, DCASE 2024's for MAESTRO)",
    "max_fpr": "segment-based AUROC: the FPR up to which the partial AUROC (mpAUC) is taken "
               "(default 0.1, DCASE 2024's)",
}


def psds_settings(args: argparse.Namespace) -> dict[str, PsdsSettings]:
    """The scenarios ``--psds`` names (presets, or ``custom``: psds_eval's defaults), each with
    the ``--psds-*`` values given."""
    overrides = {name: getattr(args, f"psds_{name}") for name in PSDS_PARAMETERS
                 if getattr(args, f"psds_{name}") is not None}
    out = {}
    for name in (n.strip() for n in (args.psds or DEFAULT_PSDS).split(",")):
        if name not in (*PRESETS, "custom"):
            raise SedContractError(f"unknown PSDS scenario {name!r} (--psds): choose among "
                                   f"{', '.join(PRESETS)} and custom")
        base = PRESETS.get(name, PsdsSettings())
        settings = replace(base, **overrides)
        changed = [f"{k} {v:g}" for k, v in settings.as_dict().items()
                   if v != base.as_dict()[k]]
        if changed and name != "custom":  # a preset with other values is not the preset
            name = f"{name} ({', '.join(changed)})"
        out[name] = settings
    return out


def psds_asked(args: argparse.Namespace) -> tuple[str, ...]:
    """The PSDS options given on the command line."""
    given_options = [f"--psds-{n.replace('_', '-')}" for n in PSDS_PARAMETERS
                     if getattr(args, f"psds_{n}") is not None]
    return (*(["--psds"] if args.psds is not None else []), *given_options,
            *(["--psds-cut"] if args.psds_cut else []), *(["--psd-roc"] if args.psd_roc else []))


def auroc_settings(args: argparse.Namespace) -> AurocSettings:
    """DCASE 2024's segment-based AUROC settings with the ``--auroc-*`` values given."""
    return AurocSettings(**{name: getattr(args, f"auroc_{name}") for name in AUROC_PARAMETERS
                            if getattr(args, f"auroc_{name}") is not None})


def curve_thresholds(text: str | None) -> tuple[float, ...]:
    """``--curves-duration-at 0.3,0.5,0.7``: finite thresholds, ascending, each once."""
    if not text:
        return ()
    out = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value in out:
            raise SedContractError(f"--curves-duration-at: {part.strip()!r} is not a finite "
                                   "threshold given once (e.g. 0.3,0.5,0.7)")
        out.append(value)
    return tuple(sorted(out))


def targets_file(text: str | None) -> str | None:
    """The risk order ``--curves-targets`` names, when it names a file (one that exists, or a
    ``.yaml`` / ``.yml`` name) rather than targets."""
    if not text:
        return None
    return text if "=" not in text or Path(text).is_file() or \
        text.endswith((".yaml", ".yml")) else None


def curve_targets(text: str | None, flag: str = "--curves-targets"
                  ) -> tuple[tuple[str, float], ...] | None:
    """``--curves-targets missed=0.8,false=0.8``: coordinate → the least score, each in
    [0, 1]; or a risk order's file whose ``targets:`` give them (``flag``: the option's name
    in messages)."""
    if not text:
        return None
    if targets_file(text):
        from sedcontract.analysis.certify import read_target_file
        from sedcontract.guard.curves import CURVE_COORDINATES

        targets = read_target_file(text)
        if targets.classes:
            raise SedContractError(f"{text}: the curves' targets hold for every class; "
                                   "per-class targets (classes:) are certify's")
        if not targets.every:
            raise SedContractError(f"{text}: no targets; add, e.g., targets: {{missed: 0.8, "
                                   "\"false\": 0.8, onset: 0.5}")
        other = [name for name, _ in targets.every if name not in CURVE_COORDINATES]
        if other:
            raise SedContractError(f"{text}: no curve of {other[0]!r} to set a target on; the "
                                   f"curves hold {', '.join(CURVE_COORDINATES)}")
        return targets.every
    out = []
    for part in text.split(","):
        name, equals, value = part.strip().partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not equals or not name or not 0 <= number <= 1:
            raise SedContractError(f"{flag}: {part.strip()!r} is not COORDINATE=SCORE "
                                   "with a score in [0, 1] (e.g. missed=0.8,false=0.8), nor a "
                                   "risk order's file")
        if name.strip() in dict(out):
            raise SedContractError(f"{flag} names {name.strip()} twice")
        out.append((name.strip(), number))
    return tuple(out)


def auroc_asked(args: argparse.Namespace) -> tuple[str, ...]:
    """The AUROC options given on the command line."""
    return tuple(f"--auroc-{n.replace('_', '-')}" for n in AUROC_PARAMETERS
                 if getattr(args, f"auroc_{n}") is not None)


def add_inputs(parser: argparse.ArgumentParser) -> None:
    """The options ``audit`` and ``scores`` share: inputs, decision, PSDS, AUROC, policy."""
    parser.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    parser.add_argument("--pred", default=None, help="predicted events (DCASE tsv)")
    parser.add_argument("--pred-scores", default=None,
                        help="directory of sed_scores_eval score files (one tsv per clip)")
    options.add_decision_options(parser)
    parser.add_argument("--durations", default=None,
                        help="clip durations (tsv filename duration)")
    parser.add_argument("--clips", choices=CLIP_LISTS, default="ref",
                        help="which file lists the clips: the reference (default; a clip "
                             "without events is a filename-only row) or the durations file "
                             "(DCASE ground truths list only clips with events)")
    parser.add_argument("--classes", default=None,
                        help="comma-separated declared classes (default: the --class-map "
                             "targets, else the classes the files name); another label is an "
                             "error")
    parser.add_argument("--class-map", default=None,
                        help="tsv 'source target' naming every class the system outputs: its "
                             "reference class, or - to drop it (e.g. the DCASE 2024 baseline's "
                             "27 columns)")
    parser.add_argument("--windows", action="store_true",
                        help="--pred-scores files named FILE-SSSSSS-EEEEEE (window start and end "
                             "in centiseconds) are merged back to FILE's time, overlaps averaged")
    parser.add_argument("--skip-unlisted", action="store_true",
                        help="skip --pred-scores files of clips the reference does not list "
                             "(counted on standard error) instead of refusing them")
    parser.add_argument("--pred-points", nargs="+", default=None, metavar="PATH",
                        help="operating-point tables (psds_eval's input: the system's "
                             "detections at each threshold), files or folders of *.tsv/*.csv: "
                             "PSDS as psds_eval computes it")
    parser.add_argument("--psds", default=None,
                        help=f"comma-separated PSDS scenarios: psds1, psds2 (the DCASE presets) "
                             f"or custom (psds_eval's defaults); --psds-* values apply to each, "
                             f"and a preset so changed is named with them, e.g. 'psds1 (dtc "
                             f"0.5)' (default {DEFAULT_PSDS})")
    for name, text in PSDS_PARAMETERS.items():
        parser.add_argument(f"--psds-{name.replace('_', '-')}", dest=f"psds_{name}",
                            type=float, default=None, help=text)
    parser.add_argument("--psds-cut", action="store_true",
                        help="cut the reference and the predictions (score frames, "
                             "operating-point detections) at the clip durations before PSDS; by "
                             "default both are taken as they come, as sed_scores_eval and "
                             "psds_eval take them")
    parser.add_argument("--psd-roc", default=None, metavar="PNG",
                        help="write the PSD-ROC of each scenario here (a PNG)")
    for name, text in AUROC_PARAMETERS.items():
        flag = f"--auroc-{name.replace('_', '-')}"
        parser.add_argument(flag, dest=f"auroc_{name}", default=None, help=text,
                            type=options.time_type(seconds, flag) if name == "segment_length"
                            else float)
    parser.add_argument("--compare-scores", default=None, metavar="DIR",
                        help="a second system's score files of the same clips: adds PSDS, mAUC "
                             "and mpAUC of --pred-scores minus this system's, each with its "
                             "paired bootstrap interval (--bootstrap N resamples, default 2000)")
    parser.add_argument("--out", default=None, help="write here instead of standard output")
    options.add_options(parser, AuditPolicy)
    options.add_options(parser, ScoreSettings)


def add_curve_options(parser: argparse.ArgumentParser) -> None:
    """``--curves`` and what reads the curves."""
    parser.add_argument("--curves", action="store_true",
                        help="with --pred-scores: the guard vector at every threshold, exact "
                             "(docs/curves.md); reports each coordinate's area over "
                             "false-activity budgets per class (md, json)")
    parser.add_argument("--curves-max-rate", type=float, default=None, metavar="PER_HOUR",
                        help="the largest false-activity budget of the areas, false events per "
                             "hour (default 100, as PSDS's max eFPR)")
    parser.add_argument("--curves-targets", default=None, metavar="C=S,...|YAML",
                        help="targets such as missed=0.8,false=0.8,onset=0.5, or a risk order "
                             "file with targets (src/sedcontract/examples/speech_gate.yaml): "
                             "each class's threshold ranges where every one holds")
    parser.add_argument("--curves-figure", default=None, metavar="PNG",
                        help="draw the curves: each coordinate against the threshold and "
                             "against the false-activity budget, a line per class")
    parser.add_argument("--curves-duration-at", default=None, metavar="T,...",
                        help="thresholds at which duration is audited beside the curves (its "
                             "matching is no step function of the threshold)")
    parser.add_argument("--curves-decision", default=None, metavar="FILE",
                        help="write a decision file (YAML) with each class's threshold inside "
                             "its widest range (audit --decision reads it)")
    parser.add_argument("--curves-certify", type=float, default=None, metavar="DELTA",
                        help="beside the ranges, the targets certified on these clips at this "
                             "δ (sedcontract certify's thresholds and guarantee; "
                             "docs/certify.md)")


def add_audit_options(parser: argparse.ArgumentParser) -> None:
    add_inputs(parser)
    add_curve_options(parser)
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both")
    options.add_monitor_options(parser)
    parser.add_argument("--coordinates", default=None,
                        help="comma-separated coordinates to report (default: all)")
    parser.add_argument("--format", choices=FORMATS["audit"], default="md")
    parser.add_argument("--system", default=None,
                        help="the system's name in source rows (--format csv; default: the "
                             "prediction file's stem)")
    parser.add_argument("--soft", default=None,
                        help="soft labels of the reference (tsv filename onset offset "
                             "event_label confidence, e.g. sedcontract data maestro's): adds the "
                             "vector by annotation confidence (md), or softness and confidence "
                             "rows (csv) for the report")
    parser.add_argument("--shard", default=None, metavar="I/N",
                        help="audit block I (from 0) of N consecutive blocks of the clips and "
                             "write a JSON shard report; sedcontract merge joins all N")
    parser.add_argument("--with-scores", action="store_true",
                        help="add the standard scores (frame, segment, collar event, "
                             "intersection, boundary F1; PSDS, mAUC and mpAUC with "
                             "--pred-scores; "
                             "--pred-points adds PSDS whatever this says)")
    options.add_bootstrap_options(parser, default=0, what="every coordinate, logic and "
                                  "standard score, and PSDS, mAUC and mpAUC of score files "
                                  "(md, json; csv: the draws of PSDS, mAUC and mpAUC, for "
                                  "sedcontract report)")
    parser.add_argument("--compare", default=None, metavar="PRED_B",
                        help="a second system's predicted events (DCASE tsv or CSV) on the same "
                             "clips: adds the paired difference (--pred minus PRED_B) of every "
                             "coordinate and logic with its paired bootstrap interval "
                             "(--bootstrap N resamples, default 2000)")


def add_scores_options(parser: argparse.ArgumentParser) -> None:
    add_inputs(parser)
    parser.add_argument("--format", choices=FORMATS["scores"], default="md")
    options.add_bootstrap_options(parser, default=0, what="each score's micro F1, and PSDS, "
                                  "mAUC and mpAUC of score files (md, json)")


def add_demo_options(parser: argparse.ArgumentParser) -> None:
    """The demo's own options: the policy and the monitor's."""
    options.add_options(parser, AuditPolicy)
    options.add_monitor_options(parser)
