"""sedcontract: executable boundary contracts for sound event detection traces."""

from sedcontract.audit import AuditPolicy, GuardReport, ScoreSettings, audit, score
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
from sedcontract.traces import EventList, Grid, TraceSet, read_events, write_events

__version__ = "0.1.0"

__all__ = [
    "AuditPolicy",
    "ContractCheckError",
    "ContractError",
    "ContractSyntaxError",
    "EventList",
    "Grid",
    "GuardReport",
    "ScoreSettings",
    "SedContractError",
    "SignalError",
    "TraceFormatError",
    "TraceSet",
    "audit",
    "check_contract",
    "evaluate_contract",
    "evaluate_formula",
    "format_contract",
    "format_formula",
    "load_contract",
    "parse_contract",
    "parse_formula",
    "read_events",
    "score",
    "write_events",
]
