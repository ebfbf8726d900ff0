"""Time SentenceTextSplitter against one bare tiktoken pass and three peer splitters, on distinct text.

A plain script, run by hand (never collected by pytest)::

    .venv/bin/pip install -r benchmarks/requirements.txt
    .venv/bin/python benchmarks/split_bench.py [--runs 9] [--one-thread] [--markdown]

Input: every distinct document of the corpus (``benchmarks/corpus_pages.py``: ``samples/``, ``tests/data/``,
``../shared/corpus``), each parsed once by our parsers into pages, no page text repeated; the characters per
language group are printed. Every contender gets the same pages: ours splits each document's page list, the
peers split each page's text, the bare pass encodes each page's text. All work at 500 tokens with our offline
cl100k_base (``chunking.tokens.get_encoding``), so nothing is downloaded.

Contenders run round-robin for ``--runs`` rounds. Per group the table gives each one's best wall seconds, its
ratio to the best bare ``encode_ordinary`` pass over the same text, the median over rounds of the ratio to that
round's bare pass (steadier when the machine's speed drifts), and the ratio of best CPU seconds of the process
(all threads). Memoising peers (semchunk, chonkie) are timed with a fresh memo every round (it can only help
within the distinct text of one pass) and without memo; chonkie's ``RecursiveChunker`` sizes by tokens only, as
the "tokens only" rows of ours do (``max_chars`` out of the way, ``TOKENS_ONLY_CHARS``; with and without the
look-ahead overlap, which the peers do not add and which then reads up to the whole next chunk); it runs once
more counting with our ``bpe-openai`` backend's counter instead of tiktoken (the peers otherwise get tiktoken,
ours its faster backend). Our splitter is timed with each token backend (bpe-openai and tiktoken) and its
chunks must be identical. Three lower bounds (``split_floor.py``) show where the time goes: "bare bpe-openai
encode + token offsets" is the tokenizer-bound part of our splitter's work, and "skeleton splitter (no rules)"
adds the least a chunk needs (one sentence-end search at the cap, its exact count, one ``Chunk``); our
splitter's time beyond the skeleton is its rules. "spans counted and packed" sizes as chonkie does, counting
sentence spans instead of encoding the page: what a splitter redesigned that way would pay before any rule.
``--one-thread`` stops our splitter from encoding long blocks on a second thread (tiktoken backend), so wall and
CPU time agree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_pages import Document, load_documents  # noqa: E402
from split_floor import counted_spans, skeleton, splitter_with, token_offsets  # noqa: E402

from chunking.splitters.sentence import measure  # noqa: E402
from chunking.tokens import get_backend, get_encoding  # noqa: E402

MAX_TOKENS = 500
BARE = "bare tiktoken encode_ordinary"
FLOOR = "bare bpe-openai encode + token offsets"
SKELETON = "skeleton splitter (no rules)"
COUNTED = "spans counted and packed (no rules, no encoding)"
Runner = Callable[[list[Document]], int]  # returns the number of chunks (or tokens, for the bare passes)


#: ``max_chars`` out of the way: our splitter sized by tokens only, as the peers size (the "tokens only" rows).
TOKENS_ONLY_CHARS = 10**9


def ours(backend: str, **settings) -> Runner:
    """Our splitter on each document's pages, with the named token backend (and any other *settings*)."""
    splitter = splitter_with(backend, MAX_TOKENS, **settings)
    return lambda docs: sum(len(list(splitter.split_pages(d.pages))) for d in docs)


def per_page(split: Callable[[str], list[Any]]) -> Runner:
    return lambda docs: sum(len(split(p.text)) for d in docs for p in d.pages)


def peers(enc) -> dict[str, Runner]:
    count = lambda s: len(enc.encode_ordinary(s))  # noqa: E731
    runners: dict[str, Runner] = {}
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        # from_tiktoken_encoder would load cl100k_base by name (a download); the same length function instead.
        lc = RecursiveCharacterTextSplitter(chunk_size=MAX_TOKENS, chunk_overlap=0, length_function=count)
        runners["LangChain RecursiveCharacterTextSplitter"] = per_page(lc.split_text)
    except ImportError as exc:
        print(f"# langchain-text-splitters not installed: {exc}")
    try:
        import semchunk

        # A new chunker per round: its memo lives only through one pass over the distinct text.
        runners["semchunk (memo)"] = lambda docs: per_page(semchunk.chunkerify(enc, MAX_TOKENS))(docs)
        runners["semchunk (no memo)"] = lambda docs: per_page(
            semchunk.chunkerify(enc, MAX_TOKENS, memoize=False))(docs)
    except ImportError as exc:
        print(f"# semchunk not installed: {exc}")
    try:
        from chonkie import RecursiveChunker

        def chonkie(memoized: bool) -> Runner:
            def run(docs: list[Document]) -> int:
                try:
                    rc = RecursiveChunker(tokenizer=enc, chunk_size=MAX_TOKENS)
                except Exception:  # a chonkie without the tiktoken adapter: a counting callable instead
                    rc = RecursiveChunker(tokenizer=count, chunk_size=MAX_TOKENS)
                if not memoized:
                    # RecursiveChunker caches token counts per split text (functools.lru_cache); bypass it.
                    rc._estimate_token_count = rc.tokenizer.count_tokens
                return per_page(rc.chunk)(docs)
            return run

        runners["chonkie RecursiveChunker (memo)"] = chonkie(True)
        runners["chonkie RecursiveChunker (no memo)"] = chonkie(False)
        bpe = get_backend(prefer="auto")
        if bpe.name == "bpe-openai":
            def chonkie_bpe(docs: list[Document]) -> int:
                # The same chunker counting with our backend's counter: like for like on the tokenizer too.
                rc = RecursiveChunker(tokenizer=bpe.count, chunk_size=MAX_TOKENS)
                rc._estimate_token_count = rc.tokenizer.count_tokens
                return per_page(rc.chunk)(docs)

            runners["chonkie RecursiveChunker (no memo), bpe-openai count"] = chonkie_bpe
    except ImportError as exc:
        print(f"# chonkie not installed: {exc}")
    return runners


def contenders(enc) -> dict[str, Runner]:
    bpe = get_backend(prefer="auto")
    runners: dict[str, Runner] = {BARE: per_page(enc.encode_ordinary)}
    if bpe.name == "bpe-openai":
        runners["bare bpe-openai encode"] = per_page(bpe.encode)
        runners["bare bpe-openai count"] = lambda docs: sum(bpe.count(p.text) for d in docs for p in d.pages)
        runners[FLOOR] = token_offsets(MAX_TOKENS)
        runners[SKELETON] = skeleton(MAX_TOKENS)
        runners[COUNTED] = counted_spans(MAX_TOKENS)
        runners["SentenceTextSplitter (bpe-openai)"] = ours("bpe-openai")
        runners["SentenceTextSplitter tokens only (bpe-openai)"] = ours("bpe-openai", max_chars=TOKENS_ONLY_CHARS)
        runners["SentenceTextSplitter tokens only, no look-ahead (bpe-openai)"] = ours(
            "bpe-openai", max_chars=TOKENS_ONLY_CHARS, semantic_overlap_percent=0)
    else:
        print("# bpe-openai not installed: our splitter is timed with tiktoken only")
    runners["SentenceTextSplitter (tiktoken)"] = ours("tiktoken")
    runners["SentenceTextSplitter tokens only (tiktoken)"] = ours("tiktoken", max_chars=TOKENS_ONLY_CHARS)
    runners.update(peers(enc))
    return runners


def check_same_chunks(groups: dict[str, list[Document]]) -> None:
    """Our chunks (text, offsets, token counts) are identical with either backend, and counts are exact."""
    if get_backend(prefer="auto").name != "bpe-openai":
        return
    enc = get_encoding()
    for backend in ("bpe-openai", "tiktoken"):
        splitter = splitter_with(backend, MAX_TOKENS)
        chunks = [c for docs in groups.values() for d in docs for c in splitter.split_pages(d.pages)]
        if backend == "bpe-openai":
            first = chunks
        elif chunks != first:
            sys.exit("chunks differ between the bpe-openai and tiktoken backends")
    wrong = [c for c in first if c.token_count != len(enc.encode_ordinary(c.text))]
    if wrong:
        sys.exit(f"{len(wrong)} chunks with an inexact token_count")
    print(f"# {len(first)} chunks identical with both backends; every token_count exact")


def time_group(runners: dict[str, Runner], docs: list[Document], runs: int) -> list[tuple[str, int, float, float,
                                                                                         float, float]]:
    wall: dict[str, list[float]] = {name: [] for name in runners}
    cpu: dict[str, list[float]] = {name: [] for name in runners}
    counts: dict[str, int] = {}
    for _ in range(runs):
        # Round-robin: load on a shared machine drifts, and every contender sees the same drift.
        for name, run in runners.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            counts[name] = run(docs)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    bare, bare_cpu = min(wall[BARE]), min(cpu[BARE])
    rows = []
    for name in runners:
        median = statistics.median(t / b for t, b in zip(wall[name], wall[BARE]))
        rows.append((name, counts[name], min(wall[name]), min(wall[name]) / bare, median, min(cpu[name]) / bare_cpu))
    return rows


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="timed rounds (every contender once per round)")
    parser.add_argument("--one-thread", action="store_true", help="our splitter encodes on the calling thread only")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (for docs/splitters.md)")
    args = parser.parse_args()
    if args.one_thread:
        measure._PARALLEL_MIN_CHARS = sys.maxsize
    documents = load_documents()
    groups: dict[str, list[Document]] = {}
    for doc in documents:
        groups.setdefault(doc.group, []).append(doc)
    for group, docs in groups.items():
        names = ", ".join(d.path.name for d in docs)
        print(f"# {group}: {sum(d.chars for d in docs):,} characters, {sum(len(d.pages) for d in docs)} pages, "
              f"{len(docs)} documents ({names})")
    versions = ", ".join(f"{name} {_version(name)}" for name in ("tiktoken", "bpe-openai", "langchain-text-splitters",
                                                                   "semchunk", "chonkie"))
    print(f"# {versions}; Python {sys.version.split()[0]}; {os.cpu_count()} CPUs")
    check_same_chunks(groups)
    enc = get_encoding()
    runners = contenders(enc)
    if args.markdown:
        print("| text | splitter | chunks | seconds | ratio | median | cpu |\n|---|---|---|---|---|---|---|")
    else:
        print(f"{'text':<6}{'splitter':<62}{'chunks':>8}{'seconds':>9}{'ratio':>7}{'median':>8}{'cpu':>7}")
    for group, docs in groups.items():
        for name, n, best, ratio, median, cpu_ratio in time_group(runners, docs, args.runs):
            shown = "-" if name.startswith("bare") else n
            if args.markdown:
                print(f"| {group} | {name} | {shown} | {best:.3f} | {ratio:.2f} | {median:.2f} | {cpu_ratio:.2f} |")
            else:
                print(f"{group:<6}{name:<62}{shown:>8}{best:>9.3f}{ratio:>7.2f}{median:>8.2f}{cpu_ratio:>7.2f}")


if __name__ == "__main__":
    main()
