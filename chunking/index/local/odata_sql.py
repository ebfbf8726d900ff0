"""OData filters (``chunking.index.odata``) as SQLite ``WHERE`` clauses for the local index, with OData's null
semantics: ``x eq 'a'`` is false and ``x ne 'a'`` true when ``x`` is null, an ordering comparison with null is
false, so ``not (...)`` of either is the opposite (SQL's three-valued logic would make both unknown).

Collections are JSON arrays in one column: ``c/any()`` is ``json_array_length(c) > 0``, ``c/any(v: body)`` an
``EXISTS`` over ``json_each(c)``. Date-times compare as instants (``julianday``), whatever their offset.
"""

from __future__ import annotations

from typing import Mapping

from chunking.index.odata import And, Any, Compare, Const, DateTime, Node, Not, Or, SearchIn, check_filter, parse_filter

__all__ = ["filter_sql"]

_SQL_OPS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}


def filter_sql(text: str, columns: Mapping[str, tuple[str, str]]) -> tuple[str, list[object]]:
    """The SQL condition and its parameters for the OData filter *text*.

    Args:
        text: a filter of the supported subset (``chunking.index.odata``).
        columns: filterable field → (SQL expression of its column, kind from ``odata.FIELD_KINDS``).

    Example: ``filter_sql("lang eq 'en'", {"lang": ("r.lang", "string")})`` → ``("r.lang IS ?", ["en"])``.

    Raises:
        FilterError: the filter is malformed, outside the subset, or wrong for *columns* (see ``check_filter``).
    """
    node = parse_filter(text)
    check_filter(node, {name: kind for name, (_, kind) in columns.items()})
    params: list[object] = []
    return _sql(node, columns, None, params), params


def _sql(node: Node, columns: Mapping[str, tuple[str, str]], var: str | None, params: list[object]) -> str:
    if isinstance(node, Const):
        return "1" if node.value else "0"
    if isinstance(node, And):
        return "(" + " AND ".join(_sql(p, columns, var, params) for p in node.parts) + ")"
    if isinstance(node, Or):
        return "(" + " OR ".join(_sql(p, columns, var, params) for p in node.parts) + ")"
    if isinstance(node, Not):
        return f"NOT {_sql(node.inner, columns, var, params)}"
    if isinstance(node, SearchIn):
        column = "value" if node.field == var else columns[node.field][0]
        if not node.values:
            return "0"
        params.extend(node.values)
        return f"coalesce({column} IN ({', '.join('?' * len(node.values))}), 0)"
    if isinstance(node, Any):
        column = columns[node.field][0]
        if node.body is None:
            return f"coalesce(json_array_length({column}), 0) > 0"
        body = _sql(node.body, columns, node.var, params)
        return f"EXISTS (SELECT 1 FROM json_each(coalesce({column}, '[]')) WHERE {body})"
    assert isinstance(node, Compare)
    column, kind = ("value", "string") if node.field == var else columns[node.field]
    value = node.value
    if value is None:
        return f"{column} IS {'NOT ' if node.op == 'ne' else ''}NULL"
    if isinstance(value, DateTime):
        column, placeholder, value = f"julianday({column})", "julianday(?)", value.text
    else:
        placeholder = "?"
        if isinstance(value, bool):
            value = int(value)
    params.append(value)
    if node.op == "eq":
        return f"coalesce({column} = {placeholder}, 0)"
    if node.op == "ne":
        return f"coalesce({column} != {placeholder}, 1)"
    return f"coalesce({column} {_SQL_OPS[node.op]} {placeholder}, 0)"
