"""Security trimming: the OData filter that keeps only the chunks a user may see, from the document-level access
lists ``acl_users`` and ``acl_groups`` (docs/architecture.md#document-level-access-control).

A chunk is visible to a user when the user is in its ``acl_users`` or one of the user's groups is in its
``acl_groups`` (``search.in`` over the groups, the filter Azure AI Search recommends for security trimming:
"Security filters for trimming results" on learn.microsoft.com). A document with neither list follows
``ACL_DEFAULT``: ``public`` (everyone sees it) or ``deny`` (nobody does, through a trimmed search). The group
``EVERYONE`` (``*``) is every user's: a document listing it is visible to all whatever ``ACL_DEFAULT`` says.
"""

from __future__ import annotations

from typing import Sequence

from chunking.index.odata import FilterError
from chunking.model import EVERYONE

__all__ = ["ACL_DEFAULTS", "combine_filters", "security_filter"]

ACL_DEFAULTS = ("public", "deny")
#: The group id that stands for "anyone" (an ADLS ACL's ``other`` entry with read); every user is in it.
# search.in splits its list at a delimiter: the first of these that no value contains.
_DELIMITERS = ",|;~^"


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _in_list(var: str, values: Sequence[str]) -> str:
    for delimiter in _DELIMITERS:
        if not any(delimiter in v for v in values):
            return f"search.in({var}, {_literal(delimiter.join(values))}, {_literal(delimiter)})"
    return " or ".join(f"{var} eq {_literal(v)}" for v in values)


def security_filter(user: str | None, groups: Sequence[str] = (), acl_default: str = "public") -> str:
    """The OData filter for what *user* (an id as stored in ``acl_users``) with *groups* may see.

    Example: ``security_filter("alice", ["hr", "all staff"], "deny")`` →
    ``"acl_users/any(u: u eq 'alice') or acl_groups/any(g: search.in(g, 'hr,all staff,*', ','))"``; with
    ``"public"`` it adds ``or (not acl_users/any() and not acl_groups/any())``.

    Raises:
        FilterError: neither a user nor a group, a blank one, or an unknown *acl_default*.
    """
    if acl_default not in ACL_DEFAULTS:
        raise FilterError(f"ACL_DEFAULT must be one of {', '.join(ACL_DEFAULTS)}, got {acl_default!r}")
    wanted = [g.strip() for g in groups]
    if (user is not None and not user.strip()) or any(not g for g in wanted):
        raise FilterError("security filter: a user or group id is blank")
    if user is None and not wanted:
        raise FilterError("security filter: give a user, groups, or both")
    parts = []
    if user is not None:
        parts.append(f"acl_users/any(u: u eq {_literal(user.strip())})")
    parts.append(f"acl_groups/any(g: {_in_list('g', list(dict.fromkeys([*wanted, EVERYONE])))})")
    if acl_default == "public":
        parts.append("(not acl_users/any() and not acl_groups/any())")
    return " or ".join(parts)


def combine_filters(*filters: str | None) -> str | None:
    """The conjunction of the non-empty *filters*, each parenthesised; ``None`` when there is none."""
    present = [f.strip() for f in filters if f and f.strip()]
    if not present:
        return None
    return present[0] if len(present) == 1 else " and ".join(f"({f})" for f in present)
