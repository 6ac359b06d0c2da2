"""The contract language: lexer, parser, typed syntax tree, printer and the exact monitor."""

from sedcontract.contracts.bounds import ROUNDINGS, BoundResolver, Conversion
from sedcontract.contracts.contract import (
    ContractResult,
    check_contract,
    contract_file,
    contract_hash,
    evaluate_contract,
    load_contract,
)
from sedcontract.contracts.monitor import evaluate_formula, evaluate_tree
from sedcontract.contracts.parser import parse_contract, parse_formula
from sedcontract.contracts.printer import format_contract, format_formula
from sedcontract.contracts.scoring import ClauseScore, clause_counts

__all__ = ["ROUNDINGS", "BoundResolver", "ClauseScore", "ContractResult", "Conversion",
           "check_contract", "clause_counts", "contract_file", "contract_hash", "evaluate_contract",
           "evaluate_formula", "evaluate_tree", "format_contract", "format_formula",
           "load_contract", "parse_contract", "parse_formula"]
