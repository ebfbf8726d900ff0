"""``--filter``, ``--user``, ``--groups`` and ``--token`` of ``chunking search``: one OData filter for the index, the
user's filter and the security filter joined by ``and`` (docs/architecture.md#document-level-access-control); or the
user's token for the service's own permission filters (docs/security.md)."""

from __future__ import annotations

import argparse
import sys

from chunking.index.odata import parse_filter
from chunking.index.security import combine_filters, security_filter

__all__ = ["add_filter_arguments", "search_filter", "user_token"]


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--filter``, ``--user`` and ``--groups`` to *parser*."""
    parser.add_argument("--filter", metavar="ODATA",
                        help="only chunks matching this OData filter, e.g. \"category eq 'policy' and language eq "
                        "'en'\" or \"last_modified ge 2024-01-01T00:00:00Z\" (eq, ne, gt, ge, lt, le, and, or, not, "
                        "search.in, any(); the same on Azure AI Search and locally)")
    parser.add_argument("--user", metavar="ID",
                        help="security trimming: only chunks this user may see (listed in acl_users, or one of "
                        "--groups in acl_groups; documents without lists follow ACL_DEFAULT)")
    parser.add_argument("--groups", metavar="ID,ID",
                        help="security trimming: the user's groups, comma-separated (with or without --user; "
                        "given empty without --user, an error rather than no trimming)")
    parser.add_argument("--token", metavar="JWT",
                        help="Azure AI Search with SEARCH_PERMISSION_FILTERS: the user's Microsoft Entra access "
                        "token (audience https://search.azure.com), sent as x-ms-query-source-authorization so the "
                        "service returns only what that user may read; '-' reads it from stdin (keeps it out of "
                        "the shell history). docs/security.md")


def search_filter(args: argparse.Namespace, settings) -> str | None:
    """The filter the search sends: ``(--filter) and (security filter)``, either one alone, or ``None``.

    Raises:
        FilterError: ``--filter`` is malformed or outside the supported subset, or ``--user``/``--groups`` are
            blank, or ``--groups`` is empty without ``--user`` (fields are checked by the index, which knows its
            own).
    """
    own = args.filter
    if own is not None:
        parse_filter(own)  # a syntax error is reported before any index is opened
    # --groups given at all means trimming, even if it is empty (a script's empty variable must not see all).
    groups = None if args.groups is None else [g for g in args.groups.split(",") if g.strip()]
    security = None
    if args.user is not None or groups is not None:
        security = security_filter(args.user, groups or [], settings.metadata.acl_default)
    return combine_filters(own, security)


def user_token(args: argparse.Namespace) -> str | None:
    """``--token``: the token given, or read from stdin for ``-`` (surrounding blanks and a ``Bearer`` prefix
    dropped); ``None`` without the option."""
    if args.token is None:
        return None
    raw = sys.stdin.read() if args.token == "-" else args.token
    return raw.strip().removeprefix("Bearer ").strip() or None
