"""Recursive-descent parser: contract text → typed syntax tree.

Precedence, loosest first: ``->`` (right), ``|``, ``&``, ``U[..]`` (right), prefix ``!`` and
modalities. Every failure is a :class:`ContractSyntaxError` with line, column and caret.
"""

from __future__ import annotations

from sedcontract.contracts.lexer import Token, tokenize, unquote
from sedcontract.contracts.syntax import (
    KINDS,
    MODALITIES,
    And,
    Atom,
    Bound,
    Const,
    Contract,
    Formula,
    FrameClause,
    Implies,
    Let,
    Not,
    Or,
    Statement,
    Temporal,
    Until,
    Window,
)
from sedcontract.errors import ContractSyntaxError

_EVENT_SORT = ("each", "match")


class _Parser:
    def __init__(self, source: str, name: str) -> None:
        self.source, self.name = source, name
        self.tokens = tokenize(source, name)
        self.pos = 0

    # -- helpers -------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.pos + k, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tok
        self.pos = min(self.pos + 1, len(self.tokens) - 1)
        return tok

    def error(self, message: str, tok: Token | None = None) -> ContractSyntaxError:
        tok = tok or self.tok
        return ContractSyntaxError(message, source=self.source, offset=tok.start, name=self.name)

    def describe(self, tok: Token) -> str:
        return "end of input" if tok.kind == "eof" else repr(tok.text)

    def expect(self, kind: str, what: str | None = None) -> Token:
        if self.tok.kind != kind:
            raise self.error(f"expected {what or repr(kind)}, found {self.describe(self.tok)}")
        return self.advance()

    def at_keyword(self, word: str) -> bool:
        return self.tok.kind == "keyword" and self.tok.text == word

    def expect_keyword(self, word: str) -> Token:
        if not self.at_keyword(word):
            raise self.error(f"expected '{word}', found {self.describe(self.tok)}")
        return self.advance()

    def event_sort(self, tok: Token) -> ContractSyntaxError:
        return self.error(f"'{tok.text}' belongs to the event sort (interval clauses and "
                          "matching), which this version of the language does not run yet; "
                          "frame clauses are written 'clause NAME: on FORMULA require FORMULA'",
                          tok)

    # -- contracts ------------------------------------------------------------------------
    def contract(self) -> Contract:
        statements: list[Statement] = []
        while self.tok.kind != "eof":
            statements.append(self.statement())
        return Contract(tuple(statements), source=self.source, name=self.name)

    def statement(self) -> Statement:
        tok = self.tok
        if self.at_keyword("let"):
            self.advance()
            name = self.expect("ident", "a name after 'let'")
            self.expect("=", "'='")
            value = self.bound()
            return Let(name.text, value, span=(tok.start, value.span[1]))
        if self.at_keyword("clause"):
            self.advance()
            name = self.expect("ident", "a clause name after 'clause'")
            self.expect(":", "':' after the clause name")
            if self.tok.kind == "keyword" and self.tok.text in _EVENT_SORT:
                raise self.event_sort(self.tok)
            self.expect_keyword("on")
            obligation = self.formula()
            self.expect_keyword("require")
            requirement = self.formula()
            return FrameClause(name.text, obligation, requirement,
                               span=(tok.start, requirement.span[1]))
        if tok.kind == "keyword" and tok.text in _EVENT_SORT:
            raise self.event_sort(tok)
        raise self.error(f"expected 'let' or 'clause', found {self.describe(tok)}")

    # -- formulas ---------------------------------------------------------------------------
    def formula(self) -> Formula:
        left = self.disjunction()
        if self.tok.kind == "->":
            self.advance()
            right = self.formula()
            return Implies(left, right, span=(left.span[0], right.span[1]))
        return left

    def disjunction(self) -> Formula:
        left = self.conjunction()
        while self.tok.kind == "|":
            self.advance()
            right = self.conjunction()
            left = Or(left, right, span=(left.span[0], right.span[1]))
        return left

    def conjunction(self) -> Formula:
        left = self.until()
        while self.tok.kind == "&":
            self.advance()
            right = self.until()
            left = And(left, right, span=(left.span[0], right.span[1]))
        return left

    def until(self) -> Formula:
        left = self.unary()
        if self.tok.kind == "ident" and self.tok.text == "U":
            op = self.advance()
            if self.tok.kind != "[":
                raise self.error("'U' needs a window, e.g. 'a U[0:10] b'", op)
            window = self.window()
            right = self.until()
            return Until(left, window, right, span=(left.span[0], right.span[1]))
        return left

    def unary(self) -> Formula:
        tok = self.tok
        if tok.kind == "!":
            self.advance()
            arg = self.unary()
            return Not(arg, span=(tok.start, arg.span[1]))
        if tok.kind == "ident" and tok.text in MODALITIES and self.peek().kind == "[":
            self.advance()
            window = self.window()
            if tok.text == "N" and window.lo is not None:
                raise self.error("N takes one radius, 'N[e]' (the window is [t-e, t+e])", tok)
            arg = self.unary()
            return Temporal(tok.text, window, arg, span=(tok.start, arg.span[1]))
        return self.primary()

    def primary(self) -> Formula:
        tok = self.tok
        if tok.kind == "(":
            self.advance()
            inner = self.formula()
            self.expect(")", "')'")
            return inner
        if tok.kind == "keyword" and tok.text in ("true", "false"):
            self.advance()
            return Const(tok.text == "true", span=(tok.start, tok.end))
        if tok.kind == "keyword" and tok.text in ("ref", "pred"):
            return self.atom()
        if tok.kind == "ident" and tok.text in (*MODALITIES, "U"):
            raise self.error(f"'{tok.text}' needs a window, e.g. '{tok.text}[10]'")
        raise self.error(f"expected a formula (an atom such as 'ref.onset', 'true', 'false', "
                         f"'!', a modality or '('), found {self.describe(tok)}")

    def atom(self) -> Atom:
        side = self.advance()
        self.expect(".", f"'.' after '{side.text}' (e.g. '{side.text}.active')")
        kind = self.tok
        if kind.kind != "ident" or kind.text not in KINDS:
            raise self.error(f"expected one of {', '.join(KINDS)} after '{side.text}.', "
                             f"found {self.describe(kind)}")
        self.advance()
        end, cls = kind.end, None
        if self.tok.kind == "[":
            self.advance()
            name = self.tok
            if name.kind in ("ident", "keyword"):
                cls = name.text
            elif name.kind == "string":
                cls = unquote(name.text)
                if not cls:
                    raise self.error("a class name cannot be empty", name)
            else:
                raise self.error(f"expected a class name, found {self.describe(name)}")
            self.advance()
            end = self.expect("]", "']' after the class name").end
        return Atom(side.text, kind.text, cls, span=(side.start, end))

    def window(self) -> Window:
        start = self.expect("[", "'['").start
        first = self.bound()
        lo, hi = None, first
        if self.tok.kind == ":":
            self.advance()
            lo, hi = first, self.bound()
        end = self.expect("]", "']' to close the window").end
        return Window(hi, lo, span=(start, end))

    def bound(self) -> Bound:
        tok = self.tok
        if tok.kind == "number":
            self.advance()
            if tok.unit is None and "." in tok.text:
                raise self.error(f"a bound without a unit counts frames and must be whole; "
                                 f"write e.g. '{tok.text}s' for seconds", tok)
            return Bound(number=tok.text, unit=tok.unit, span=(tok.start, tok.end))
        if tok.kind == "ident":
            self.advance()
            return Bound(name=tok.text, span=(tok.start, tok.end))
        raise self.error(f"expected a bound (frames like '10', a time like '200ms' or '0.2s', "
                         f"or a 'let' name), found {self.describe(tok)}")


def _run(parser: _Parser, rule):
    try:
        return rule()
    except RecursionError:
        raise ContractSyntaxError("formula is nested too deeply", source=parser.source,
                                  offset=parser.tok.start, name=parser.name) from None


def parse_formula(text: str, *, name: str = "<formula>") -> Formula:
    """Parse one frame-sort formula."""
    parser = _Parser(text, name)
    result = _run(parser, parser.formula)
    if parser.tok.kind != "eof":
        raise parser.error(f"unexpected {parser.describe(parser.tok)} after a complete formula")
    return result


def parse_contract(text: str, *, name: str = "<contract>") -> Contract:
    """Parse a contract: ``let`` bindings and clauses."""
    parser = _Parser(text, name)
    return _run(parser, parser.contract)
