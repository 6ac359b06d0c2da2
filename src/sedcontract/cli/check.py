"""``sedcontract check``: parse and type-check a contract under a grid, print it canonically."""

from __future__ import annotations

import argparse

from sedcontract.cli import options
from sedcontract.cli.command import Command
from sedcontract.contracts import contract_hash, format_contract
from sedcontract.guard import AuditPolicy
from sedcontract.outputs import Outputs


def _run(args: argparse.Namespace, out: Outputs) -> int:
    policy = options.build(AuditPolicy, args, contract=args.contract)
    conversions = policy.conversions()
    contract = policy.parsed
    print(format_contract(contract), end="")
    guard = [c.name for c in contract.clauses if not c.diagnostic]
    print(f"# ok: {len(guard)} coordinate(s) ({', '.join(guard) or 'none'}), "
          f"{len(contract.clauses) - len(guard)} diagnostic(s), sha256 {contract_hash(contract)}")
    for conversion in conversions:
        print(f"# {conversion}")
    return 0


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("contract", help="shipped name (standard) or a .contract file")
    options.add_options(parser, AuditPolicy, only=("hop", "rounding", "eps"))


COMMANDS = [Command("check", "parse and type-check a contract, print it canonically", _options,
                    _run, lambda a: {"contract": a.contract})]
