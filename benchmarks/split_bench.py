"""Time SentenceTextSplitter against one bare tiktoken pass and three peer splitters (spec §10).

A plain script, run by hand (never collected by pytest)::

    .venv/bin/pip install -r benchmarks/requirements.txt
    .venv/bin/python benchmarks/split_bench.py

Inputs, built in this process from ``shared/corpus`` (beside the repository): the English AMC manual (PDF text
via pypdfium2, one Page per PDF page) and the Chinese Debian Reference chapter 2 (HTML text via BeautifulSoup),
each repeated to at least 1 MB. Every splitter works at 500 tokens with our offline cl100k_base ``Encoding``
(``chunking.tokens.get_encoding``), so nothing is downloaded. Contenders run round-robin for ``--runs`` rounds;
the table gives each one's best seconds, that time's ratio to the best bare ``encode_ordinary`` pass over the
same text, the median over rounds of the ratio to that round's bare pass (steadier on a machine whose
speed drifts), and the ratio of best CPU seconds of the process (all threads: our splitter encodes a block of
64K characters or more as two halves on two threads, so on one core it is slower than its wall-clock ratio). semchunk and chonkie memoise token counts, which the repeated text rewards, so each is also
timed without its memo.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunking.model import Page  # noqa: E402
from chunking.splitters import SentenceTextSplitter  # noqa: E402
from chunking.tokens import get_encoding  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
TARGET_CHARS = 1_000_000
MAX_TOKENS = 500


def english_pages() -> list[str]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(CORPUS / "amc-manual.en.pdf"))
    return [pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf))]


def chinese_text() -> str:
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)
    html = (CORPUS / "debian-reference-ch02.zh-cn.html").read_text(encoding="utf-8")
    return BeautifulSoup(html, "lxml").get_text()


def repeated(pages: list[str]) -> list[str]:
    """The pages repeated until their total length reaches TARGET_CHARS."""
    out: list[str] = []
    while sum(map(len, out)) < TARGET_CHARS:
        out.extend(pages)
    return out


def as_pages(texts: list[str]) -> list[Page]:
    pages, offset = [], 0
    for num, text in enumerate(texts):
        pages.append(Page(num, offset, text))
        offset += len(text)
    return pages


def contenders(enc) -> dict[str, Callable[[list[Page], str], object]]:
    count = lambda s: len(enc.encode_ordinary(s))  # noqa: E731
    ours = SentenceTextSplitter(max_tokens=MAX_TOKENS)
    runners: dict[str, Callable[[list[Page], str], object]] = {
        "bare encode_ordinary": lambda pages, text: enc.encode_ordinary(text),
        "SentenceTextSplitter": lambda pages, text: list(ours.split_pages(pages)),
    }
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        # from_tiktoken_encoder would load cl100k_base by name (a download); the same length function instead.
        lc = RecursiveCharacterTextSplitter(chunk_size=MAX_TOKENS, chunk_overlap=0, length_function=count)
        runners["langchain Recursive"] = lambda pages, text: lc.split_text(text)
    except ImportError as exc:
        print(f"# langchain-text-splitters not installed: {exc}")
    try:
        import semchunk

        # Memoised token counting pays off on the repeated test text only, so both settings are timed;
        # the "fresh" variants build a new chunker per run and count without a memo.
        memo = semchunk.chunkerify(enc, MAX_TOKENS)
        runners["semchunk (memoized)"] = lambda pages, text: memo(text)
        runners["semchunk (no memo)"] = lambda pages, text: semchunk.chunkerify(enc, MAX_TOKENS, memoize=False)(text)
    except ImportError as exc:
        print(f"# semchunk not installed: {exc}")
    try:
        from chonkie import RecursiveChunker

        def chonkie_chunker(memoized: bool):
            try:
                rc = RecursiveChunker(tokenizer=enc, chunk_size=MAX_TOKENS)
            except Exception:  # a chonkie without the tiktoken adapter: a counting callable instead
                rc = RecursiveChunker(tokenizer=count, chunk_size=MAX_TOKENS)
            if not memoized:
                # RecursiveChunker caches token counts per split text (functools.lru_cache); bypass it.
                rc._estimate_token_count = rc.tokenizer.count_tokens
            return rc

        cached = chonkie_chunker(True)
        runners["chonkie (memoized)"] = lambda pages, text: cached.chunk(text)
        runners["chonkie (no memo)"] = lambda pages, text: chonkie_chunker(False).chunk(text)
    except ImportError as exc:
        print(f"# chonkie not installed: {exc}")
    return runners


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed rounds (every splitter once per round)")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"corpus not found at {CORPUS}")
    enc = get_encoding()
    inputs = {
        "en": as_pages(repeated(english_pages())),
        "zh": as_pages(repeated([chinese_text()])),
    }
    runners = contenders(enc)
    print(f"{'text':<5}{'splitter':<24}{'chars':>10}{'chunks':>8}{'seconds':>10}{'ratio':>8}{'median':>8}{'cpu':>8}")
    for lang, pages in inputs.items():
        text = "".join(p.text for p in pages)
        # The Chinese text is one HTML page: give our splitter one page too (the worst case for streaming).
        if lang == "zh":
            pages = [Page(0, 0, text)]
        # Round-robin runs: load on a shared machine drifts, and every contender sees the same. Two summaries:
        # the best time of each (and its ratio to the best bare pass), and the median over rounds of the ratio
        # to that round's bare pass, which is steadier when the machine's speed changes between rounds.
        times: dict[str, list[float]] = {name: [] for name in runners}
        cpu: dict[str, list[float]] = {name: [] for name in runners}
        counts: dict[str, int] = {}
        for _ in range(args.runs):
            for name, fn in runners.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                result = fn(pages, text)
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
                counts[name] = 0 if name == "bare encode_ordinary" else len(result)  # type: ignore[arg-type]
        bare_times = times["bare encode_ordinary"]
        bare, bare_cpu = min(bare_times), min(cpu["bare encode_ordinary"])
        for name in runners:
            best = min(times[name])
            median = statistics.median(t / b for t, b in zip(times[name], bare_times))
            cpu_ratio = min(cpu[name]) / bare_cpu
            print(f"{lang:<5}{name:<24}{len(text):>10}{counts[name]:>8}{best:>10.3f}{best / bare:>8.2f}{median:>8.2f}"
                  f"{cpu_ratio:>8.2f}")


if __name__ == "__main__":
    main()
