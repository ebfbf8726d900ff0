"""Chunk counts and model calls per chunking strategy on the English AMC manual, first run and second run.

A plain script, run by hand (never collected by pytest)::

    .venv/bin/python benchmarks/strategies_report.py [--pdf PATH] [--max-tokens 500]

Each strategy is selected as the pipeline selects it (``SPLITTERS=".pdf=<name>"`` through
``chunking.documents.splitter.splitter_for``) with the embedded default clients: the offline lexical embedder and the
offline rule-based chat client, so the numbers are counts, not quality. Run 1 starts with an empty model cache
(a fresh state folder); run 2 builds new clients over the same cache folder, as a new process re-ingesting the
unchanged file would. "Model calls" are the requests made while chunking (chat completions, embedding requests
for sentence windows); "vectors" is the number of chunks stage 2 embeds (parents stored without a vector
excluded), which stage 2 then reuses by hash on a re-ingest.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunking.documents.splitter import splitter_for  # noqa: E402
from chunking.parsers import parse_document  # noqa: E402
from chunking.services import reset_strategy_clients, strategy_clients  # noqa: E402
from chunking.settings import Settings  # noqa: E402
from bench_args import at_least, existing  # noqa: E402

PDF = ROOT / "samples" / "amc-manual.en.pdf"
STRATEGIES = ("sentence", "semantic", "hierarchical", "small_to_big", "sentence_window", "propositions", "llm",
              "router", "sentence+enrich")


def run(name: str, pages: list, state: Path, max_tokens: int) -> dict:
    """One chunking run of strategy *name*; the clients are new, the cache folder is *state*/cache."""
    reset_strategy_clients()
    settings = Settings.from_env({"SPLITTERS": f".pdf={name}", "CHUNKING_STATE_DIR": str(state),
                                  "SPLIT_MAX_TOKENS": str(max_tokens)})
    started = time.perf_counter()
    chunks = splitter_for("amc-manual.en.pdf", settings).split(pages)
    seconds = time.perf_counter() - started
    clients = strategy_clients(settings)
    return {"chunks": len(chunks), "vectors": sum(1 for c in chunks if c.metadata.get("embed", True)),
            "chat": clients.chat.requests, "embed": clients.embedder.requests, "seconds": seconds,
            "fallbacks": sum(1 for c in chunks if c.metadata.get("fallback_reason"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=existing, default=PDF, help="the PDF to split (default: the English AMC manual)")
    parser.add_argument("--max-tokens", type=at_least(1), default=500, help="SPLIT_MAX_TOKENS (default 500)")
    args = parser.parse_args()
    pages = parse_document(args.pdf.read_bytes(), source=args.pdf.name)
    print(f"{args.pdf.name}: {len(pages)} pages, {sum(len(p.text) for p in pages)} characters; "
          f"SPLIT_MAX_TOKENS={args.max_tokens}; offline embedder and offline chat client\n")
    header = ("strategy", "chunks", "vectors", "chat 1st", "embed 1st", "chat 2nd", "embed 2nd", "s 1st", "s 2nd",
              "fallbacks")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in STRATEGIES:
            state = Path(tmp) / name.replace("+", "_")
            first, second = run(name, pages, state, args.max_tokens), run(name, pages, state, args.max_tokens)
            assert (first["chunks"], first["vectors"]) == (second["chunks"], second["vectors"]), name
            rows.append((name, first["chunks"], first["vectors"], first["chat"], first["embed"], second["chat"],
                         second["embed"], f"{first['seconds']:.2f}", f"{second['seconds']:.2f}", first["fallbacks"]))
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    print("| " + " | ".join(str(h).ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in
                                enumerate(zip(row, widths))) + " |")
    reset_strategy_clients()
    return 0


if __name__ == "__main__":
    sys.exit(main())
