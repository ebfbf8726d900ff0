"""Size repair of unit groups (docs/splitters.md#size-repair), shared by the semantic and the LLM
chunkers.

Input: consecutive groups of units (half-open index ranges ``[i, j)`` that partition ``range(n)``), the distance
``d[k]`` between unit ``k`` and unit ``k + 1``, and the exact token count of any group. Steps:

1. **Too big**: a group over ``max_tokens`` with more than one unit is cut after its largest internal distance
   (the earliest on ties), recursively, until every group fits or is a single unit.
2. **Too small**: the first group under ``min_tokens`` (left to right) merges with the neighbour across the
   smaller boundary distance (the left one on ties) if the merged group stays within ``max_tokens``; if it would
   not, with the other neighbour on the same condition. Repeat until no group can merge.

Both steps are deterministic: the same distances and counts give the same groups.
"""

from __future__ import annotations

from itertools import accumulate
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

if TYPE_CHECKING:
    from chunking.strategies.units import DocumentText, Unit

__all__ = ["Group", "group_tokens", "repair_sizes"]

Group = tuple[int, int]


def repair_sizes(
    groups: Sequence[Group],
    distances: Sequence[float],
    tokens: Callable[[int, int], int],
    *,
    min_tokens: int,
    max_tokens: int,
) -> list[Group]:
    """Enforce ``min_tokens``/``max_tokens`` on *groups* (module docstring).

    Args:
        groups: ranges ``[i, j)`` of unit indices, consecutive, covering ``0 … n − 1``.
        distances: ``n − 1`` floats, ``distances[k]`` between units ``k`` and ``k + 1``.
        tokens: tokens of the group ``[i, j)``, exact at least when it is within ``max_tokens`` (a group far over
            the cap may be answered by an estimate above the cap); each group is asked once.
        min_tokens, max_tokens: the bounds, ``0 ≤ min_tokens ≤ max_tokens``.

    Returns:
        the repaired groups, still consecutive and covering the same units.
    """
    memo: dict[Group, int] = {}

    def size(group: Group) -> int:
        if group not in memo:
            memo[group] = tokens(*group)
        return memo[group]

    fitted: list[Group] = []
    as_array = np.asarray(distances, dtype=np.float64)
    for group in groups:
        fitted.extend(_cut_to_fit(group, as_array, size, max_tokens))
    return _merge_small(fitted, distances, size, min_tokens, max_tokens)


def _cut_to_fit(group: Group, distances: np.ndarray, size: Callable[[Group], int], max_tokens: int) -> list[Group]:
    # An explicit stack, not recursion: equal distances (e.g. a run of wordless table-of-contents lines) peel one
    # unit at a time, as deep as the group is long.
    out: list[Group] = []
    stack = [group]
    while stack:
        i, j = stack.pop()
        if j - i <= 1 or size((i, j)) <= max_tokens:
            out.append((i, j))
            continue
        # argmax returns the first of equal values: the earliest cut on ties.
        k = i + int(np.argmax(distances[i : j - 1]))
        stack.extend([(k + 1, j), (i, k + 1)])  # left popped first: groups come out in order
    return out


def _merge_small(groups: list[Group], distances: Sequence[float], size: Callable[[Group], int], min_tokens: int,
                 max_tokens: int) -> list[Group]:
    groups = list(groups)
    merged = True
    while merged and len(groups) > 1:
        merged = False
        for g, (i, j) in enumerate(groups):
            if size((i, j)) >= min_tokens:
                continue
            left = distances[i - 1] if g > 0 else None
            right = distances[j - 1] if g + 1 < len(groups) else None
            order = [-1, 1] if right is None or (left is not None and left <= right) else [1, -1]
            for side in order:
                n = g + side
                if not 0 <= n < len(groups):
                    continue
                candidate = (min(i, groups[n][0]), max(j, groups[n][1]))
                if size(candidate) <= max_tokens:
                    groups[min(g, n)] = candidate
                    del groups[max(g, n)]
                    merged = True
                    break
            if merged:
                break
    return groups


def group_tokens(units: Sequence["Unit"], doc: "DocumentText", count: Callable[[str], int],
                 max_tokens: int) -> Callable[[int, int], int]:
    """Tokens of the document slice from unit ``i`` to unit ``j − 1``: exact, except that a group whose units sum
    to more than twice *max_tokens* answers that sum (it is over the cap either way), so cutting a long run
    does not re-encode it once per cut."""
    sums = [0, *accumulate(u.tokens for u in units)]

    def tokens(i: int, j: int) -> int:
        estimate = sums[j] - sums[i]
        if estimate > 2 * max_tokens:
            return estimate
        return count(doc.slice(units[i].start, max(u.end for u in units[i:j])))

    return tokens
