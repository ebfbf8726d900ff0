"""What parsing in a child process costs (``PARSE_ISOLATION=process``, the default) against parsing in-line, on
every real test document: median milliseconds of a few runs each, after the parse server has started.

Run by hand from the repository root:

    .venv/bin/python benchmarks/parse_isolation.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chunking.parsers import ParseError, ReadContext, parse_document  # noqa: E402
from chunking.parsers.limits import Deadline  # noqa: E402
from chunking.parsers.sandbox import _server, parse_in_child  # noqa: E402
from tests.sample_documents import document_paths  # noqa: E402
from bench_args import at_least  # noqa: E402


def _median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=at_least(1), default=5, help="runs per document and mode (default 5)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    _server()
    print(f"parse server started in {(time.perf_counter() - started) * 1000:.0f} ms (once per worker process)\n")
    print("| document | size | in-line ms | child ms | extra ms |")
    print("|---|---:|---:|---:|---:|")
    total_inline = total_child = 0.0
    for path in document_paths():
        data = path.read_bytes()
        try:
            parse_document(data, source=path.name)
        except ParseError:
            continue
        inline = _median_ms(lambda: parse_document(data, source=path.name, context=ReadContext()), args.runs)
        child = _median_ms(lambda: parse_in_child(data, source=path.name, max_bytes=None, max_memory_mb=1024,
                                                  context=ReadContext(deadline=Deadline(300))), args.runs)
        total_inline, total_child = total_inline + inline, total_child + child
        print(f"| {path.name} | {len(data) / 1024:.0f} KB | {inline:.1f} | {child:.1f} | {child - inline:+.1f} |")
    print(f"| all | | {total_inline:.0f} | {total_child:.0f} | {total_child - total_inline:+.0f} "
          f"({total_child / total_inline:.2f}x) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
