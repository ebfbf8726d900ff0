"""What turning one chunk record into its message's dict costs: ``ChunkRecord.to_dict`` against the same dict
made with ``dataclasses.asdict`` (what ``to_dict`` did before: a deep copy of every value), on the same records.

A plain script, run by hand (never collected by pytest)::

    .venv/bin/python benchmarks/records_bench.py [--records 200] [--repeats 7] [--dimensions 1536]

Records look like stage 1's: a 170-word chunk, two headings, the document fields, two access groups, one
metadata field; without a vector (as stage 1 sends them) and with one of ``--dimensions`` floats. Prints the
microseconds per record of each way (best of ``--repeats``, the two interleaved) and their ratio.
"""

from __future__ import annotations

import argparse
import random
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chunking.model import ChunkRecord  # noqa: E402
from tests.model_reference import as_dataclass_dict  # noqa: E402
from bench_args import at_least  # noqa: E402


def records(count: int, dimensions: int | None) -> list[ChunkRecord]:
    rng = random.Random(0)
    return [ChunkRecord(f"doc-{i:05d}", "doc", "v" * 64, "folder/file.pdf", f"folder/file.pdf#page={i + 1}", i, i,
                        i + 1, i * 900, i * 900 + 850, "word " * 170, "h" * 64, 200,
                        headings=("Chapter 1", "Section 1.2"),
                        embedding=None if dimensions is None else tuple(rng.random() for _ in range(dimensions)),
                        title="A title", storage_url="https://account.blob.core.windows.net/c/folder/file.pdf",
                        content_type="application/pdf", last_modified="2024-05-01T10:20:30Z", size_bytes=123456,
                        language="en", acl_groups=("g1", "g2"), metadata=(("team", "x"),))
            for i in range(count)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--records", type=at_least(1), default=200, help="records measured (default 200)")
    parser.add_argument("--repeats", type=at_least(1), default=7, help="timed repeats, the best kept (default 7)")
    parser.add_argument("--dimensions", type=at_least(1), default=1536,
                        help="floats in the vector of the second row (default 1536)")
    args = parser.parse_args(argv)
    print("| records | asdict µs | to_dict µs | ratio |")
    print("|---|---|---|---|")
    for label, dimensions in (("without a vector", None), (f"with {args.dimensions} floats", args.dimensions)):
        batch = records(args.records, dimensions)
        assert all(r.to_dict() == as_dataclass_dict(r) for r in batch)
        best = {"asdict": float("inf"), "to_dict": float("inf")}
        number = 20 if dimensions is None else 2
        for _ in range(args.repeats):
            for name, convert in (("asdict", as_dataclass_dict), ("to_dict", ChunkRecord.to_dict)):
                seconds = timeit.timeit(lambda: [convert(r) for r in batch], number=number)  # noqa: B023
                best[name] = min(best[name], seconds / (number * len(batch)))
        print(f"| {label} | {best['asdict'] * 1e6:.1f} | {best['to_dict'] * 1e6:.1f} | "
              f"{best['asdict'] / best['to_dict']:.1f} |")


if __name__ == "__main__":
    main()
