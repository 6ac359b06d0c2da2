"""sedcontract: executable boundary contracts for sound event detection traces."""

from sedcontract import analysis, renamed, scores
from sedcontract.contracts import (
    check_contract,
    evaluate_contract,
    evaluate_formula,
    format_contract,
    format_formula,
    load_contract,
    parse_contract,
    parse_formula,
)
from sedcontract.errors import (
    ContractCheckError,
    ContractError,
    ContractSyntaxError,
    SedContractError,
    SignalError,
    TraceFormatError,
)
from sedcontract.guard import (
    AuditPolicy,
    GuardReport,
    ScoreSettings,
    ScoresReport,
    audit,
    bootstrap_intervals,
    hierarchical_bootstrap,
    paired_bootstrap,
    score,
    to_csv,
    to_json,
    to_markdown,
)
from sedcontract.scores.psds import (
    PRESETS,
    PsdsRequest,
    PsdsSettings,
    paired_psds,
    psds,
    psds_of_points,
)
from sedcontract.scores.segment_roc import (
    AurocRequest,
    AurocSettings,
    paired_auroc,
    segment_auroc,
)
from sedcontract.traces import EventList, Grid, TraceSet, read_durations, read_events, write_events
from sedcontract.traces.decision import DecisionPolicy

__version__ = "0.1.0"

# sedcontract.audit is the function; the package that was sedcontract.audit is sedcontract.guard,
# and its old paths import with a FutureWarning
renamed.install()

__all__ = [
    "PRESETS",
    "AuditPolicy",
    "AurocRequest",
    "AurocSettings",
    "ContractCheckError",
    "ContractError",
    "ContractSyntaxError",
    "DecisionPolicy",
    "EventList",
    "Grid",
    "GuardReport",
    "PsdsRequest",
    "PsdsSettings",
    "ScoreSettings",
    "ScoresReport",
    "SedContractError",
    "SignalError",
    "TraceFormatError",
    "TraceSet",
    "analysis",
    "audit",
    "bootstrap_intervals",
    "check_contract",
    "evaluate_contract",
    "evaluate_formula",
    "format_contract",
    "format_formula",
    "hierarchical_bootstrap",
    "load_contract",
    "paired_auroc",
    "paired_bootstrap",
    "paired_psds",
    "parse_contract",
    "parse_formula",
    "psds",
    "psds_of_points",
    "read_durations",
    "read_events",
    "score",
    "scores",
    "segment_auroc",
    "to_csv",
    "to_json",
    "to_markdown",
    "write_events",
]
