"""The OData ``$filter`` subset both indexes understand: parsed into a small tree and checked against the index's
filterable fields, so that a filter that works locally means the same on Azure AI Search (which gets the text as
it is) and one that would not work there fails here too, with a reason.

Grammar (a subset of Azure AI Search's OData filter syntax, "OData $filter syntax" on learn.microsoft.com)::

    filter     := or
    or         := and ("or" and)*
    and        := unary ("and" unary)*
    unary      := "not" unary | primary
    primary    := "(" filter ")" | "true" | "false" | comparison | search_in | lambda
    comparison := FIELD OP LITERAL | LITERAL OP FIELD          OP: eq ne gt ge lt le
    search_in  := "search.in(" FIELD_OR_VAR "," STRING ["," STRING] ")"   (default delimiters: space and comma)
    lambda     := COLLECTION "/any(" VAR ":" body ")" | COLLECTION "/any()"
    body       := VAR "eq" STRING | search_in over VAR, joined by "or"
    LITERAL    := 'text' ('' for a quote) | 42 | -1.5 | true | false | null | 2024-05-01T10:20:30Z

Inside ``any()`` a string collection allows only ``eq`` and ``search.in`` joined by ``or``: the rules Azure AI
Search sets for string collections ("Understanding OData collection filters"). ``all()``, ``search.ismatch``,
``search.score``, ``geo.*`` and arithmetic are refused with :class:`FilterError` naming what is supported.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Mapping, Union

__all__ = [
    "And", "Any", "Compare", "Const", "DateTime", "FIELD_KINDS", "FilterError", "Not", "Or", "SearchIn",
    "check_filter", "parse_filter",
]

#: Field kinds a filter can test: ``strings`` is a collection of strings (``Collection(Edm.String)``).
FIELD_KINDS = ("string", "int", "float", "bool", "datetime", "strings")
_SUPPORTED = "eq, ne, gt, ge, lt, le, and, or, not, search.in and any() over collections"


class FilterError(ValueError):
    """A filter that is malformed, uses syntax outside the supported subset, or names a field the index cannot
    filter on; the message says which and where (character offset, 0-based)."""


@dataclass(frozen=True)
class DateTime:
    """An ``Edm.DateTimeOffset`` literal, kept as written (ISO 8601 with ``Z`` or an offset)."""

    text: str


Value = Union[str, int, float, bool, None, DateTime]


@dataclass(frozen=True)
class Compare:
    """``field op value``; *field* may be a lambda variable."""

    field: str
    op: str
    value: Value


@dataclass(frozen=True)
class SearchIn:
    """``search.in(field, 'a,b', delimiters)`` with the list already split (empty pieces dropped)."""

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Any:
    """``collection/any(var: body)``; ``body`` ``None`` for ``collection/any()`` (the collection is not empty)."""

    field: str
    var: str
    body: "Node | None"


@dataclass(frozen=True)
class And:
    parts: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    parts: tuple["Node", ...]


@dataclass(frozen=True)
class Not:
    inner: "Node"


@dataclass(frozen=True)
class Const:
    value: bool


Node = Union[Compare, SearchIn, Any, And, Or, Not, Const]

_OPS = ("eq", "ne", "gt", "ge", "lt", "le")
_FLIP = {"eq": "eq", "ne": "ne", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>'(?:[^']|'')*')
    | (?P<date>\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d))
    | (?P<num>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    | (?P<punct>[()/,:])
    )""",
    re.VERBOSE,
)
_REFUSED = {
    "all": "all() is not supported (use not COLLECTION/any(...))",
    "search.ismatch": "search.ismatch is not supported in filters here",
    "search.ismatchscoring": "search.ismatchscoring is not supported in filters here",
    "search.score": "search.score is not supported in filters",
    "add": "arithmetic is not part of OData filters", "sub": "arithmetic is not part of OData filters",
    "mul": "arithmetic is not part of OData filters", "div": "arithmetic is not part of OData filters",
}  # fmt: skip


@dataclass(frozen=True)
class _Tok:
    kind: str  # str, date, num, name, punct, end
    text: str
    at: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while text[pos:].strip():
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            start = len(text) - len(text[pos:].lstrip())
            raise FilterError(f"filter: unexpected {text[start:start + 12]!r} at character {start}")
        kind = m.lastgroup or "end"
        out.append(_Tok(kind, m.group(kind), m.start(kind)))
        pos = m.end()
    out.append(_Tok("end", "", len(text)))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.vars: list[str] = []

    def peek(self, ahead: int = 0) -> _Tok:
        return self.toks[min(self.i + ahead, len(self.toks) - 1)]

    def take(self) -> _Tok:
        tok = self.peek()
        self.i += 1
        return tok

    def fail(self, tok: _Tok, what: str) -> FilterError:
        found = "the end" if tok.kind == "end" else repr(tok.text)
        return FilterError(f"filter: {what}, found {found} at character {tok.at}")

    def expect(self, text: str) -> _Tok:
        tok = self.take()
        if tok.text != text:
            raise self.fail(tok, f"expected {text!r}")
        return tok

    def keyword(self, word: str) -> bool:
        tok = self.peek()
        if tok.kind == "name" and tok.text.lower() == word:
            self.i += 1
            return True
        return False

    def parse(self) -> Node:
        node = self.disjunction()
        if self.peek().kind != "end":
            raise self.fail(self.peek(), "expected 'and', 'or' or the end of the filter")
        return node

    def disjunction(self) -> Node:
        parts = [self.conjunction()]
        while self.keyword("or"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def conjunction(self) -> Node:
        parts = [self.unary()]
        while self.keyword("and"):
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def unary(self) -> Node:
        if self.keyword("not"):
            return Not(self.unary())
        return self.primary()

    def primary(self) -> Node:
        tok = self.peek()
        if tok.text == "(":
            self.take()
            node = self.disjunction()
            self.expect(")")
            return node
        if tok.kind == "name":
            lowered = tok.text.lower()
            if lowered in _REFUSED:
                raise FilterError(f"filter: {_REFUSED[lowered]} (character {tok.at}); supported: {_SUPPORTED}")
            if lowered in ("true", "false") and self.peek(1).text.lower() not in _OPS:
                self.take()
                return Const(lowered == "true")
            if lowered == "search.in":
                return self.search_in()
            if lowered.startswith(("geo.", "search.")):
                raise FilterError(f"filter: {tok.text} is not supported (character {tok.at}); supported: {_SUPPORTED}")
            if self.peek(1).text == "/":
                return self.lambda_()
        return self.comparison()

    def search_in(self) -> SearchIn:
        self.take()
        self.expect("(")
        field = self.field()
        self.expect(",")
        values = self.take()
        if values.kind != "str":
            raise self.fail(values, "search.in takes a quoted list of values")
        delimiters = " ,"
        if self.peek().text == ",":
            self.take()
            tok = self.take()
            if tok.kind != "str" or not _unquote(tok.text):
                raise self.fail(tok, "search.in's delimiters are a quoted, non-empty string")
            delimiters = _unquote(tok.text)
        self.expect(")")
        pieces = re.split("[" + re.escape(delimiters) + "]", _unquote(values.text))
        return SearchIn(field, tuple(p for p in pieces if p))

    def lambda_(self) -> Any:
        field = self.take().text
        self.expect("/")
        op = self.take()
        if op.text.lower() == "all":
            raise FilterError(f"filter: {_REFUSED['all']} (character {op.at}); supported: {_SUPPORTED}")
        if op.text.lower() != "any":
            raise self.fail(op, "expected any after '/' (paths into complex fields are not supported)")
        self.expect("(")
        if self.peek().text == ")":
            self.take()
            return Any(field, "", None)
        var = self.take()
        if var.kind != "name":
            raise self.fail(var, "expected a lambda variable, as in acl_groups/any(g: g eq 'x')")
        self.expect(":")
        self.vars.append(var.text)
        body = self.disjunction()
        self.vars.pop()
        self.expect(")")
        return Any(field, var.text, body)

    def field(self) -> str:
        tok = self.take()
        if tok.kind != "name" or tok.text.lower() in ("true", "false", "null", "and", "or", "not"):
            raise self.fail(tok, "expected a field name")
        if self.peek().text == "/":
            raise self.fail(self.peek(), "paths into complex fields are not supported")
        return tok.text

    def comparison(self) -> Compare:
        left = self.peek()
        if left.kind == "name" and left.text.lower() not in ("true", "false", "null"):
            field = self.field()
            op = self.operator()
            return Compare(field, op, self.literal())
        value = self.literal()
        op = self.operator()
        return Compare(self.field(), _FLIP[op], value)

    def operator(self) -> str:
        tok = self.take()
        if tok.kind != "name" or tok.text.lower() not in _OPS:
            raise self.fail(tok, "expected a comparison operator (eq, ne, gt, ge, lt, le)")
        return tok.text.lower()

    def literal(self) -> Value:
        tok = self.take()
        if tok.kind == "str":
            return _unquote(tok.text)
        if tok.kind == "date":
            return DateTime(tok.text)
        if tok.kind == "num":
            return float(tok.text) if any(c in tok.text for c in ".eE") else int(tok.text)
        if tok.kind == "name" and tok.text.lower() in ("true", "false", "null"):
            return None if tok.text.lower() == "null" else tok.text.lower() == "true"
        raise self.fail(tok, "expected a value ('text', a number, true, false, null or a date-time)")


def _unquote(literal: str) -> str:
    return literal[1:-1].replace("''", "'")


def parse_filter(text: str) -> Node:
    """Parse an OData filter of the supported subset (module docstring) into its tree.

    Example: ``parse_filter("category eq 'hr' and not acl_groups/any()")`` →
    ``And((Compare('category', 'eq', 'hr'), Not(Any('acl_groups', '', None))))``.

    Raises:
        FilterError: malformed, or outside the subset (the message names the construct and the character offset).
    """
    if not text.strip():
        raise FilterError("filter: empty")
    return _Parser(text).parse()


def check_filter(node: Node, fields: Mapping[str, str]) -> None:
    """Check *node* against the index's filterable *fields* (name → one of ``FIELD_KINDS``), as the service would.

    Raises:
        FilterError: an unknown or unfilterable field, a value of the wrong type (a number for a string field, a
            malformed date-time), a collection compared directly, ``any()`` over a field that is no collection, or
            a lambda body outside the string-collection rules (only ``eq`` / ``search.in`` joined by ``or``).
    """
    _check(node, fields, None)


def _kind(name: str, fields: Mapping[str, str], var: str | None) -> str:
    if var is not None and name == var:
        return "string"
    if name not in fields:
        known = ", ".join(sorted(fields))
        raise FilterError(f"filter: unknown or unfilterable field {name!r} (filterable: {known})")
    return fields[name]


def _check(node: Node, fields: Mapping[str, str], var: str | None) -> None:
    if isinstance(node, (And, Or)):
        for part in node.parts:
            _check(part, fields, var)
    elif isinstance(node, Not):
        if var is not None:
            raise FilterError(f"filter: 'not' inside {var}'s any() is not allowed for string collections")
        _check(node.inner, fields, var)
    elif isinstance(node, Compare):
        kind = _kind(node.field, fields, var)
        if var is not None and (node.field != var or node.op != "eq"):
            raise FilterError(f"filter: inside any(), string collections allow only '{var} eq …' and "
                              f"search.in({var}, …) joined by 'or'")
        if var is None and kind == "strings":
            raise FilterError(f"filter: {node.field} is a collection: test its items with "
                              f"{node.field}/any(x: x eq 'value')")
        _check_value(node, kind)
    elif isinstance(node, SearchIn):
        kind = _kind(node.field, fields, var)
        if kind != "string":
            raise FilterError(f"filter: search.in needs a string field or a lambda variable; {node.field} is "
                              f"{'a collection' if kind == 'strings' else kind}")
    elif isinstance(node, Any):
        if var is not None:
            raise FilterError("filter: any() inside any() is not supported")
        if _kind(node.field, fields, None) != "strings":
            raise FilterError(f"filter: any() needs a collection field; {node.field} is {fields[node.field]}")
        if node.body is not None:
            if isinstance(node.body, And):
                raise FilterError(f"filter: inside any(), string collections allow only '{node.var} eq …' and "
                                  f"search.in({node.var}, …) joined by 'or', not 'and'")
            _check(node.body, fields, node.var)


def _check_value(node: Compare, kind: str) -> None:
    value = node.value
    if value is None:
        if node.op not in ("eq", "ne"):
            raise FilterError(f"filter: null can only be compared with eq or ne ({node.field} {node.op} null)")
        return
    ok = {
        "string": isinstance(value, str),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, (int, float)) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "datetime": isinstance(value, DateTime),
    }.get(kind, False)
    if not ok:
        raise FilterError(f"filter: {node.field} is a {kind} field; {value!r} is not a {kind} value"
                          + (" (quote text: 'value')" if kind == "string" else ""))
    if kind == "bool" and node.op not in ("eq", "ne"):
        raise FilterError(f"filter: {node.field} is a bool field: only eq and ne apply")
    if isinstance(value, DateTime):
        try:
            dt.datetime.fromisoformat(value.text.replace("Z", "+00:00"))
        except ValueError:
            raise FilterError(f"filter: {value.text} is not a valid date-time") from None
