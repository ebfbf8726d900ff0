"""What the parse benchmarks (``html_bench.py``, ``docx_bench.py``) share: timing contenders round-robin on each
file (``round_robin``), and the Markdown table they print (``print_ratio_table``): per file and in total, each
contender's median and minimum milliseconds over rounds and the median over rounds of its ratio to the floor's
time in the same round."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

Seconds = dict[str, dict[Path, list[float]]]  # contender -> file -> seconds per round


def round_robin(contenders: dict[str, Callable[..., object]], inputs: dict[Path, tuple], rounds: int) -> Seconds:
    """Seconds per contender, file and round: every contender once on each file's arguments (``inputs[path]``) per
    round, round-robin, so the drift of a shared machine falls on all alike; after one warm-up call each on the
    first file (imports and first-use caches)."""
    files = list(inputs)
    seconds: Seconds = {name: {path: [] for path in files} for name in contenders}
    for run in contenders.values():
        run(*inputs[files[0]])
    for _ in range(rounds):
        for path in files:
            for name, run in contenders.items():
                started = time.perf_counter()
                run(*inputs[path])
                seconds[name][path].append(time.perf_counter() - started)
    return seconds


def print_ratio_table(files: list[Path], seconds: Seconds, floor: str) -> None:
    """Print the table for *seconds* (contenders in their order, *floor* among them) over *files*."""
    names = list(seconds)
    print(f"| file | KB | {' | '.join(f'{name} ms (min)' for name in names)} | "
          f"{' | '.join(f'{name} ratio' for name in names if name != floor)} |")
    print("|---|---|" + "---|" * (2 * len(names) - 1))
    rounds = len(seconds[floor][files[0]])
    for path in [*files, None]:
        if path is None:
            label, size = "all", sum(p.stat().st_size for p in files)
            per_round = {name: [sum(seconds[name][p][r] for p in files) for r in range(rounds)] for name in names}
        else:
            label, size = path.name, path.stat().st_size
            per_round = {name: seconds[name][path] for name in names}
        times = " | ".join(f"{statistics.median(per_round[n]) * 1e3:.1f} ({min(per_round[n]) * 1e3:.1f})"
                           for n in names)
        ratios = " | ".join(f"{statistics.median(a / b for a, b in zip(per_round[n], per_round[floor])):.2f}"
                            for n in names if n != floor)
        print(f"| {label} | {size / 1024:,.0f} | {times} | {ratios} |")
