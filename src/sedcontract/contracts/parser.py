"""Recursive-descent parser: contract text → typed syntax tree.

Precedence, loosest first: ``->`` (right), ``|``, ``&``, ``U[..]`` (right), prefix ``!`` and
modalities. Every failure is a :class:`ContractSyntaxError` with line, column and caret.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sedcontract.contracts.lexer import Token, tokenize, unquote
from sedcontract.contracts.syntax import (
    COMPARISONS,
    FLAGS,
    FUNCTIONS,
    KINDS,
    METHODS,
    MODALITIES,
    SIDES,
    And,
    Atom,
    Binary,
    BoolLit,
    Bound,
    Call,
    ClassName,
    Const,
    Contract,
    Count,
    EventClause,
    Expr,
    Flag,
    Formula,
    FrameClause,
    Implies,
    Let,
    Match,
    Negation,
    Not,
    Number,
    Or,
    Statement,
    Temporal,
    Time,
    Until,
    Var,
    Window,
)
from sedcontract.errors import ContractSyntaxError

# parentheses, prefix operators (! N F G P H) and right-associative chains (-> U) nest; chains
# of & | + - * / are any length (every tree walk is iterative)
MAX_NESTING = 32


class _Parser:
    def __init__(self, source: str, name: str) -> None:
        self.source, self.name = source, name
        self.tokens = tokenize(source, name)
        self.pos = 0
        self.depth = 0

    # -- helpers -------------------------------------------------------------------------
    @contextmanager
    def nested(self) -> Iterator[None]:
        """One more level of nesting; refused past :data:`MAX_NESTING` with a clear error."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise self.error(f"nested too deeply (more than {MAX_NESTING} levels of "
                                 "parentheses, prefix operators ! N F G P H, or chained -> or "
                                 "U); flatten it, e.g. into several clauses")
            yield
        finally:
            self.depth -= 1

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
        if self.at_keyword("match"):
            return self.match()
        if self.at_keyword("clause") or self.at_keyword("diagnostic"):
            self.advance()
            name = self.tok  # clause names may be keywords: 'clause false: …'
            if name.kind not in ("ident", "keyword"):
                raise self.error(f"expected a name after '{tok.text}', found "
                                 f"{self.describe(name)}")
            self.advance()
            self.expect(":", "':' after the name")
            diagnostic = tok.text == "diagnostic"
            if self.at_keyword("each"):
                return self.event_clause(tok, name.text, diagnostic)
            if not self.at_keyword("on"):
                raise self.error("expected 'on FORMULA' (a frame clause) or 'each ref|pred|"
                                 f"pair(m)' (an event clause), found {self.describe(self.tok)}")
            self.advance()
            obligation = self.formula()
            self.expect_keyword("require")
            requirement = self.formula()
            return FrameClause(name.text, obligation, requirement, diagnostic,
                               span=(tok.start, requirement.span[1]))
        raise self.error(f"expected 'let', 'match', 'clause' or 'diagnostic', found "
                         f"{self.describe(tok)}")

    def match(self) -> Match:
        start = self.advance()
        name = self.expect("ident", "a name after 'match'")
        self.expect(":", "':' after the matching name")
        self.expect_keyword("ref")
        self.expect("~", "'~' (a matching relates ref ~ pred)")
        self.expect_keyword("pred")
        self.expect_keyword("when")
        relation = self.expr()
        self.expect_keyword("using")
        method = self.tok
        if method.kind != "ident" or method.text not in METHODS:
            raise self.error(f"expected a matching method ({' or '.join(METHODS)}), found "
                             f"{self.describe(method)}")
        self.advance()
        return Match(name.text, relation, method.text, span=(start.start, method.end))

    def event_clause(self, start: Token, name: str, diagnostic: bool) -> EventClause:
        self.advance()  # each
        match = None
        if self.at_keyword("ref") or self.at_keyword("pred"):
            each = self.advance().text
        elif self.at_keyword("pair"):
            self.advance()
            self.expect("(", "'(' after 'pair'")
            match = self.expect("ident", "a matching name, as in 'pair(m)'").text
            self.expect(")", "')'")
            each = "pair"
        else:
            raise self.error(f"expected 'ref', 'pred' or 'pair(m)' after 'each', found "
                             f"{self.describe(self.tok)}")
        where = None
        if self.at_keyword("where"):
            self.advance()
            where = self.expr()
        self.expect_keyword("require")
        requirement = self.expr()
        return EventClause(name, each, match, where, requirement, diagnostic,
                           span=(start.start, requirement.span[1]))

    # -- event expressions ---------------------------------------------------------------------
    def expr(self) -> Expr:
        with self.nested():
            left = self.expr_or()
            if self.tok.kind == "->":
                self.advance()
                right = self.expr()
                return Binary("->", left, right, span=(left.span[0], right.span[1]))
            return left

    def _left_assoc(self, ops: tuple[str, ...], operand) -> Expr:
        left = operand()
        while self.tok.kind in ops:
            op = self.advance().text
            right = operand()
            left = Binary(op, left, right, span=(left.span[0], right.span[1]))
        return left

    def expr_or(self) -> Expr:
        return self._left_assoc(("|",), self.expr_and)

    def expr_and(self) -> Expr:
        return self._left_assoc(("&",), self.expr_not)

    def expr_not(self) -> Expr:
        tok = self.tok
        if tok.kind == "!":
            self.advance()
            with self.nested():
                arg = self.expr_not()
            return Negation(arg, span=(tok.start, arg.span[1]))
        return self.comparison()

    def comparison(self) -> Expr:
        left = self.sum()
        if self.tok.kind in COMPARISONS:
            op = self.advance().text
            right = self.sum()
            if self.tok.kind in COMPARISONS:
                raise self.error("comparisons do not chain; join them with '&'")
            return Binary(op, left, right, span=(left.span[0], right.span[1]))
        return left

    def sum(self) -> Expr:
        return self._left_assoc(("+", "-"), self.product)

    def product(self) -> Expr:
        return self._left_assoc(("*", "/"), self.term)

    def term(self) -> Expr:
        tok = self.tok
        span = (tok.start, tok.end)
        if tok.kind == "(":
            self.advance()
            inner = self.expr()
            self.expect(")", "')'")
            return inner
        if tok.kind == "number":
            self.advance()
            if tok.unit is None:
                return Number(tok.text, span=span)
            return Time(Bound(number=tok.text, unit=tok.unit, span=span), span=span)
        if tok.kind == "string":
            self.advance()
            return ClassName(unquote(tok.text), span=span)
        if tok.kind == "keyword" and tok.text in ("true", "false"):
            self.advance()
            return BoolLit(tok.text == "true", span=span)
        if tok.kind == "keyword" and tok.text in SIDES:
            self.advance()
            if self.tok.kind == ".":
                raise self.error("frame atoms such as 'ref.onset' belong in frame clauses "
                                 "('on …'); in an event clause use dur(ref), onset(ref), …")
            return Var(tok.text, span=span)
        if tok.kind == "ident" and self.peek().kind == "(":
            return self.call()
        if tok.kind == "ident" and tok.text in FLAGS:
            self.advance()
            return Flag(tok.text, span=span)
        if tok.kind == "ident":
            self.advance()
            return Time(Bound(name=tok.text, span=span), span=span)
        raise self.error(f"expected an expression (a number, a time such as '200ms', a name, "
                         f"ref, pred, a function such as dur(ref), or '('), found "
                         f"{self.describe(tok)}")

    def call(self) -> Expr:
        fn = self.advance()
        self.expect("(", "'('")
        if fn.text == "count":
            counted = self.tok
            if not (self.at_keyword("ref") or self.at_keyword("pred")):
                raise self.error(f"expected 'pred overlapping ref' or 'ref overlapping pred' "
                                 f"in count(…), found {self.describe(counted)}")
            self.advance()
            self.expect_keyword("overlapping")
            around = self.tok
            if not (self.at_keyword("ref") or self.at_keyword("pred")) or \
                    around.text == counted.text:
                raise self.error("count(…) relates the two sides: 'count(pred overlapping "
                                 "ref)' or 'count(ref overlapping pred)'", around)
            self.advance()
            end = self.expect(")", "')'").end
            return Count(counted.text, around.text, span=(fn.start, end))
        if fn.text not in FUNCTIONS:
            known = ", ".join(sorted([*FUNCTIONS, "count"]))
            raise self.error(f"unknown function {fn.text!r}; known functions: {known}", fn)
        args = [self.expr()]
        while self.tok.kind == ",":
            self.advance()
            args.append(self.expr())
        end = self.expect(")", "')'").end
        if len(args) != FUNCTIONS[fn.text]:
            raise self.error(f"{fn.text}() takes {FUNCTIONS[fn.text]} argument(s), got "
                             f"{len(args)}", fn)
        return Call(fn.text, tuple(args), span=(fn.start, end))

    # -- formulas ---------------------------------------------------------------------------
    def formula(self) -> Formula:
        with self.nested():
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
            with self.nested():
                right = self.until()
            return Until(left, window, right, span=(left.span[0], right.span[1]))
        return left

    def unary(self) -> Formula:
        tok = self.tok
        if tok.kind == "!":
            self.advance()
            with self.nested():
                arg = self.unary()
            return Not(arg, span=(tok.start, arg.span[1]))
        if tok.kind == "ident" and tok.text in MODALITIES and self.peek().kind == "[":
            self.advance()
            window = self.window()
            if tok.text == "N" and window.lo is not None:
                raise self.error("N takes one radius, 'N[e]' (the window is [t-e, t+e])", tok)
            with self.nested():
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
        if tok.kind == "keyword" and tok.text in SIDES:
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


def _check_text(text: object, what: str) -> None:
    if not isinstance(text, str):
        raise ContractSyntaxError(f"{what} must be text (a str), got {type(text).__name__}")


def parse_formula(text: str, *, name: str = "<formula>") -> Formula:
    """Parse one frame-sort formula."""
    _check_text(text, "a formula")
    parser = _Parser(text, name)
    result = _run(parser, parser.formula)
    if parser.tok.kind != "eof":
        raise parser.error(f"unexpected {parser.describe(parser.tok)} after a complete formula")
    return result


def parse_contract(text: str, *, name: str = "<contract>") -> Contract:
    """Parse a contract: ``let`` bindings and clauses."""
    _check_text(text, "a contract")
    parser = _Parser(text, name)
    return _run(parser, parser.contract)
