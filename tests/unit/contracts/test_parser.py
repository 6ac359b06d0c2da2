"""The language: parsing, precedence, printing, and syntax errors with line, column, caret."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sedcontract.contracts import (
    format_contract,
    format_formula,
    load_contract,
    parse_contract,
    parse_formula,
)
from sedcontract.contracts.syntax import (
    And,
    Atom,
    Bound,
    Const,
    FrameClause,
    Implies,
    Let,
    Not,
    Or,
    Temporal,
    Until,
    Window,
)
from sedcontract.errors import ContractCheckError, ContractSyntaxError
from tests.helpers.formulas import formula_strategy

RA, PA, RO = Atom("ref", "active"), Atom("pred", "active"), Atom("ref", "onset")


@pytest.mark.parametrize(("text", "tree"), [
    ("ref.active & pred.active | ref.onset", Or(And(RA, PA), RO)),
    ("ref.active | pred.active & ref.onset", Or(RA, And(PA, RO))),
    ("ref.active -> pred.active -> ref.onset", Implies(RA, Implies(PA, RO))),
    ("!ref.active & pred.active", And(Not(RA), PA)),
    ("ref.active U[2:5] pred.active & ref.onset",
     And(Until(RA, Window(Bound("5"), Bound("2")), PA), RO)),
    ("ref.active U[3] pred.active U[1] ref.onset",
     Until(RA, Window(Bound("3")), Until(PA, Window(Bound("1")), RO))),
    ("N[eps] F[0.2s] G[1:200ms] true",
     Temporal("N", Window(Bound(name="eps")),
              Temporal("F", Window(Bound("0.2", "s")),
                       Temporal("G", Window(Bound("200", "ms"), Bound("1")), Const(True))))),
    ('pred.active["people talking"] & ref.onset[speech]',
     And(Atom("pred", "active", "people talking"), Atom("ref", "onset", "speech"))),
    ("(ref.active) # a comment\n & false", And(RA, Const(False))),
])
def test_parse(text, tree):
    assert parse_formula(text) == tree


@pytest.mark.parametrize("text", [
    "ref.onset -> N[10] pred.onset",
    "pred.active U[0:20] ref.offset",
    "(ref.active -> pred.active) -> ref.onset",
    "ref.active & (pred.active | ref.onset)",
    "(ref.active U[1] pred.active) U[2] ref.onset",
    "!(ref.active & pred.active)",
    "F[2] (ref.active U[1:3] pred.active)",
])
def test_printer_keeps_needed_parentheses(text):
    assert format_formula(parse_formula(text)) == text


def test_contract_parses_prints_and_round_trips():
    text = ("let eps = 200ms\nlet wide = eps\n"
            "clause onset: on ref.onset require N[eps] pred.onset\n"
            "clause quiet:\n  on !N[wide] ref.active\n  require !pred.active\n")
    contract = parse_contract(text)
    assert contract.lets == {"eps": Bound("200", "ms"), "wide": Bound(name="eps")}
    assert contract.clauses == (
        FrameClause("onset", RO, Temporal("N", Window(Bound(name="eps")), Atom("pred", "onset"))),
        FrameClause("quiet", Not(Temporal("N", Window(Bound(name="wide")), RA)), Not(PA)))
    assert isinstance(contract.statements[0], Let)
    assert parse_contract(format_contract(contract)) == contract


def test_shipped_standard_contract_round_trips():
    contract = load_contract("standard")
    guard = [c.name for c in contract.clauses if not c.diagnostic]
    assert guard == ["onset", "offset", "missed", "false", "silence", "duration",
                     "fragmentation"]
    assert [c.name for c in contract.clauses if c.diagnostic] == [
        "late_onset", "early_onset", "late_release", "early_release", "merge", "leakage"]
    assert parse_contract(format_contract(contract)) == contract


def error_of(text: str, *, contract: bool = False) -> ContractSyntaxError:
    with pytest.raises(ContractSyntaxError) as info:
        (parse_contract if contract else parse_formula)(text)
    return info.value


@pytest.mark.parametrize(("text", "line", "column", "fragment"), [
    ("ref.active &", 1, 13, "expected a formula"),
    ("ref.actve", 1, 5, "expected one of active, onset, offset"),
    ("N[3:4] ref.active", 1, 1, "N takes one radius"),
    ("F[10x] ref.active", 1, 5, "unknown unit 'x'"),
    ("F[1.5] ref.active", 1, 3, "must be whole"),
    ("F ref.active", 1, 1, "needs a window"),
    ("ref.active U pred.active", 1, 12, "'U' needs a window"),
    ("(ref.active", 1, 12, "expected ')'"),
    ("ref.active pred.active", 1, 12, "after a complete formula"),
    ("ref.active[]", 1, 12, "expected a class name"),
    ("ref.active $", 1, 12, "unexpected character '$'"),
    ('ref.active["open', 1, 12, "strings are closed on the same line"),
])
def test_syntax_errors_point_at_the_problem(text, line, column, fragment):
    err = error_of(text)
    assert (err.line, err.column) == (line, column)
    assert fragment in str(err)
    caret_line = str(err).splitlines()[-1]
    assert caret_line.index("^") - 4 == column - 1  # caret under the column (4-space indent)


def test_contract_errors_report_later_lines():
    err = error_of("let eps = 200ms\nclause onset: on ref.onset\n  require N[eps pred.onset\n",
                   contract=True)
    assert (err.line, err.column) == (3, 17)
    assert "expected ']'" in str(err)
    assert "N[eps pred.onset" in str(err)


def test_clause_heads_say_what_is_expected():
    err = error_of("clause missed: every ref require true", contract=True)
    assert "expected 'on FORMULA' (a frame clause) or 'each ref|pred|pair(m)'" in str(err)
    assert (err.line, err.column) == (1, 16)
    err = error_of("let eps = 10\nmatch m: ref ~ pred", contract=True)
    assert "expected 'when'" in str(err) and err.line == 2


def test_deep_nesting_is_a_syntax_error_not_a_crash():
    err = error_of("!" * 20000 + "ref.active")
    assert "nested too deeply" in str(err)


@pytest.mark.parametrize("text", [
    "!" * 500 + "ref.active", "F[1] " * 900 + "ref.active", "(" * 40 + "ref.active" + ")" * 40,
    " -> ".join(["ref.active"] * 100), " U[0:1] ".join(["ref.active"] * 100),
])
def test_nesting_has_one_documented_limit(text):
    """Parentheses, prefix operators and right-associative chains nest; past the limit the
    parser says so at the offending token (so check refuses what audit could not run)."""
    assert "more than 32 levels" in str(error_of(text))
    shallow = "!" * 31 + "ref.active"
    assert format_formula(parse_formula(shallow)) == shallow


@pytest.mark.parametrize("op", ["&", "|"])
def test_long_flat_chains_parse_print_and_compare(op):
    text = f" {op} ".join(["ref.active", "pred.onset"] * 2500)
    tree = parse_formula(text)
    assert format_formula(tree) == text  # the iterative printer keeps the canonical text
    contract = parse_contract("clause c: each ref require " + " + ".join(["dur(ref)"] * 5000)
                              + " >= 0")
    assert format_contract(contract).count("dur(ref)") == 5000


def test_carets_line_up_under_tabs_and_long_lines_are_cut():
    err = error_of("clause c: on\tref.onset require\t\tprd.onset", contract=True)
    lines = str(err).splitlines()
    assert lines[1].index("prd") == len(lines[2]) - 1 and lines[2].endswith("\t\t^")
    err = error_of("clause c: on ref.onset require " + "pred.onset & " * 300 + "prd",
                   contract=True)
    lines = str(err).splitlines()
    assert len(lines[1]) < 120 and lines[1].startswith("    …")
    assert lines[1].index("prd") == len(lines[2]) - 1


def test_contract_files_may_start_with_a_byte_order_mark(tmp_path):
    path = tmp_path / "bom.contract"
    path.write_bytes("\ufeffclause c: on ref.onset require pred.onset\n".encode())
    assert format_contract(load_contract(path)) == "clause c: on ref.onset require pred.onset\n"
    for bad in (None, 3, ""):
        with pytest.raises(ContractCheckError, match="a contract is a shipped name"):
            load_contract(bad)
    with pytest.raises(ContractSyntaxError, match="a contract must be text"):
        parse_contract(None)
    with pytest.raises(ContractSyntaxError, match="a formula must be text"):
        parse_formula(b"ref.active")


# -- fuzzing: nothing but ContractSyntaxError escapes the parser -----------------------------
ALPHABET = st.sampled_from(list("refpdactivonsN FGPHU[]():!&|->.0123456789msl\"\\#\n\t=,~x"))


def check_only_syntax_errors(text: str) -> None:
    for parse in (parse_formula, parse_contract):
        try:
            parse(text)
        except ContractSyntaxError as err:
            assert err.line is not None and err.column is not None


@settings(max_examples=1000)
@given(st.text())
def test_fuzz_arbitrary_strings(text):
    check_only_syntax_errors(text)


@settings(max_examples=1000)
@given(st.text(ALPHABET, max_size=60))
def test_fuzz_language_alphabet(text):
    check_only_syntax_errors(text)


@settings(max_examples=1000)
@given(formula_strategy(max_bound=30), st.data())
def test_fuzz_mutated_valid_formulas(formula, data):
    text = format_formula(formula)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        action = data.draw(st.sampled_from(("delete", "insert", "swap")))
        if action == "delete" and text:
            text = text[:i] + text[i + 1:]
        elif action == "insert":
            text = text[:i] + data.draw(ALPHABET) + text[i:]
        elif i + 1 < len(text):
            text = text[:i] + text[i + 1] + text[i] + text[i + 2:]
    check_only_syntax_errors(text)
    check_only_syntax_errors(f"let eps = 2\nclause c: on {text} require {text}")
