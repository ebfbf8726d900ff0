"""The OData filter subset: parse trees, the errors for what is outside it, SQLite evaluation with OData's null
semantics, and the security filter."""

from __future__ import annotations

import json
import sqlite3

import pytest

from chunking.index.local.odata_sql import filter_sql
from chunking.index.odata import And, Any, Compare, Const, DateTime, FilterError, Not, Or, SearchIn, parse_filter
from chunking.index.security import combine_filters, security_filter

COLUMNS = {
    "id": ("id", "string"), "category": ("category", "string"), "size_bytes": ("size_bytes", "int"),
    "has_vector": ("has_vector", "bool"), "last_modified": ("last_modified", "datetime"),
    "acl_users": ("acl_users", "strings"), "acl_groups": ("acl_groups", "strings"),
}  # fmt: skip
ROWS = [
    # id, category, size_bytes, has_vector, last_modified, acl_users, acl_groups
    ("a", "hr", 100, 1, "2024-05-01T10:20:30Z", ["alice"], []),
    ("b", "legal", 2000, 0, "2024-06-01T00:00:00Z", [], ["lawyers", "board"]),
    ("c", None, 50, 1, None, [], []),
    ("d", "O'Brien", 10, 1, "2024-05-01T12:20:30+02:00", ["bob", "alice"], ["all staff"]),
]
PUBLIC_ROW = ("e", "public", 1, 1, None, [], ["*"])


def table(rows) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE r (id, category, size_bytes, has_vector, last_modified, acl_users, acl_groups)")
    conn.executemany("INSERT INTO r VALUES (?, ?, ?, ?, ?, ?, ?)",
                     [(*row[:5], json.dumps(row[5]), json.dumps(row[6])) for row in rows])
    return conn


@pytest.fixture(scope="module")
def db():
    conn = table(ROWS)
    yield conn
    conn.close()


def matching(db, text: str) -> list[str]:
    where, params = filter_sql(text, COLUMNS)
    return [row[0] for row in db.execute(f"SELECT id FROM r WHERE {where} ORDER BY id", params)]


def test_parse_trees():
    assert parse_filter("category eq 'hr' and not acl_groups/any()") == And(
        (Compare("category", "eq", "hr"), Not(Any("acl_groups", "", None))))
    assert parse_filter("(a eq 1 or 2.5 lt b) and true") == And(
        (Or((Compare("a", "eq", 1), Compare("b", "gt", 2.5))), Const(True)))
    assert parse_filter("acl_groups/any(g: search.in(g, 'x|y z', '|'))") == Any(
        "acl_groups", "g", SearchIn("g", ("x", "y z")))
    assert parse_filter("search.in(category, 'a, b c')") == SearchIn("category", ("a", "b", "c"))
    assert parse_filter("last_modified ge 2024-05-01T00:00:00Z") == Compare(
        "last_modified", "ge", DateTime("2024-05-01T00:00:00Z"))
    assert parse_filter("category eq 'O''Brien' or category eq null") == Or(
        (Compare("category", "eq", "O'Brien"), Compare("category", "eq", None)))


@pytest.mark.parametrize(("text", "expected"), [
    ("category eq 'hr'", ["a"]),
    ("category ne 'hr'", ["b", "c", "d"]),  # null ne 'hr' is true
    ("not (category eq 'hr')", ["b", "c", "d"]),
    ("category eq null", ["c"]),
    ("category ne null", ["a", "b", "d"]),
    ("category eq 'O''Brien'", ["d"]),
    ("size_bytes gt 50", ["a", "b"]),
    ("50 ge size_bytes", ["c", "d"]),
    ("not (size_bytes lt 100)", ["a", "b"]),
    ("has_vector eq false", ["b"]),
    ("last_modified eq 2024-05-01T10:20:30Z", ["a", "d"]),  # the same instant at another offset
    ("last_modified lt 2024-05-02T00:00:00Z", ["a", "d"]),
    ("not (last_modified lt 2024-05-02T00:00:00Z)", ["b", "c"]),
    ("search.in(category, 'hr,legal', ',')", ["a", "b"]),
    ("search.in(category, '')", []),
    ("acl_users/any(u: u eq 'alice')", ["a", "d"]),
    ("acl_users/any()", ["a", "d"]),
    ("not acl_users/any() and not acl_groups/any()", ["c"]),
    ("acl_groups/any(g: search.in(g, 'board all', ' '))", ["b"]),  # 'all' is not 'all staff'
    ("acl_groups/any(g: search.in(g, 'board|all staff', '|'))", ["b", "d"]),
    ("acl_groups/any(g: g eq 'board' or g eq 'nobody')", ["b"]),
    ("acl_users/any(u: u eq 'bob') or category eq 'legal'", ["b", "d"]),
    ("true and not false", ["a", "b", "c", "d"]),
    ("ID eq 'a' or id eq 'a'", None),  # field names are case-sensitive, as in the service
])  # fmt: skip
def test_filters_select_exactly(db, text, expected):
    if expected is None:
        with pytest.raises(FilterError, match="unknown or unfilterable field 'ID'"):
            matching(db, text)
    else:
        assert matching(db, text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("", "filter: empty"),
    ("category eq", "expected a value"),
    ("category = 'hr'", "unexpected \"= 'hr'\" at character 9"),
    ("category eq 'hr' category", "expected 'and', 'or' or the end of the filter, found 'category'"),
    ("search.ismatch('x')", "search.ismatch is not supported"),
    ("acl_users/all(u: u ne 'x')", r"all\(\) is not supported"),
    ("geo.distance(loc, x) lt 2", "geo.distance is not supported"),
    ("category eq 3", "category is a string field; 3 is not a string value"),
    ("size_bytes eq '3'", "size_bytes is a int field"),
    ("acl_users eq 'alice'", r"acl_users is a collection: test its items with acl_users/any\(x: x eq 'value'\)"),
    ("category/any()", r"any\(\) needs a collection field; category is string"),
    ("acl_users/any(u: u ne 'a')", r"only 'u eq …' and search.in\(u, …\) joined by 'or'"),
    ("acl_users/any(u: u eq 'a' and u eq 'b')", "not 'and'"),
    ("acl_users/any(u: not (u eq 'a'))", "'not' inside u's any"),
    ("search.in(acl_users, 'a')", "search.in needs a string field or a lambda variable; acl_users is a collection"),
    ("size_bytes gt null", "null can only be compared with eq or ne"),
    ("has_vector gt true", "only eq and ne apply"),
    ("last_modified gt 2024-13-01T00:00:00Z", "not a valid date-time"),
    ("meta/name eq 'x'", "paths into complex fields are not supported"),
])  # fmt: skip
def test_errors_say_what_is_wrong(db, text, message):
    with pytest.raises(FilterError, match=message):
        matching(db, text)


def test_security_filter_text_and_effect():
    db = table([*ROWS, PUBLIC_ROW])
    text = security_filter("alice", ["board", "all staff"], "deny")
    assert text == "acl_users/any(u: u eq 'alice') or acl_groups/any(g: search.in(g, 'board,all staff,*', ','))"
    assert matching(db, text) == ["a", "b", "d", "e"]
    assert matching(db, security_filter("carol", [], "deny")) == ["e"]  # only what everyone may read
    assert matching(db, security_filter("carol", [], "public")) == ["c", "e"]
    assert matching(db, security_filter(None, ["lawyers"], "public")) == ["b", "c", "e"]
    # A value holding the delimiter moves search.in to another one.
    assert security_filter(None, ["a,b", "c"], "deny") == "acl_groups/any(g: search.in(g, 'a,b|c|*', '|'))"
    assert security_filter("o'neil", [], "deny") == (
        "acl_users/any(u: u eq 'o''neil') or acl_groups/any(g: search.in(g, '*', ','))")


def test_security_filter_refuses_nonsense():
    with pytest.raises(FilterError, match="give a user, groups, or both"):
        security_filter(None, [])
    with pytest.raises(FilterError, match="blank"):
        security_filter(" ", [])
    with pytest.raises(FilterError, match="ACL_DEFAULT must be one of public, deny"):
        security_filter("a", [], "open")


def test_combine_filters():
    assert combine_filters(None, " ", "a eq 1") == "a eq 1"
    assert combine_filters("a eq 1", "b or c") == "(a eq 1) and (b or c)"
    assert combine_filters(None, "") is None
