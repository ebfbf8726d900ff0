"""Chunk quality of our sentence splitter and its peers on the in-repo corpus (``samples/`` + ``tests/data/``).

Usage: ``python benchmarks/chunk_quality.py [--max-tokens 500]``. Peers come from ``benchmarks/requirements.txt``;
one that is not installed is reported as missing and left out. Every splitter gets the same text of each
document: for ours the parsed pages (furniture in ``Page.header``/``footer``, offsets counting it); for the peers
the document text those offsets refer to, every page's ``header + text + footer`` joined, so furniture removal
is credited to ours only where it happens. Each chunk is located in that text by its start offset (ours:
``char_start``; LangChain: ``start_index``; chonkie: ``start_index``; semchunk: ``offsets=True``) and its own
text; tokens are ``cl100k_base`` of the chunk text, for every splitter.

Metrics, per document group (pdf, html/docx, markdown, other formats; cjk and latin by language tag):

- ``chunks``: number of chunks; ``mean tok``: their mean token count;
- ``<50``: chunks under 50 tokens; ``>cap``: chunks over ``--max-tokens``;
- ``mid-sent %``: share of chunks whose first character is not at a sentence start: not at the start of the
  text, not after a blank line, and the last non-blank character before it is no sentence end (our sentence
  end predicate, docs/splitters.md#sentence-end, applied to the document text the same way for every splitter);
- ``mid-line %``: share of chunks whose first character is not the first non-blank character of its line;
- ``cross-page``: of the hand-labelled page breaks that cut a sentence (``benchmarks/data/cross_page_sentences.json``),
  how many have the whole sentence (last sentence start before the break to first sentence end after it) inside
  one chunk's own span.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunking.parsers import SUPPORTED_EXTENSIONS, parse_document  # noqa: E402
from chunking.splitters.sentence import SentenceTextSplitter  # noqa: E402
from chunking.splitters.sentence.boundaries import Boundaries  # noqa: E402
from chunking.splitters.sentence.config import SentenceSplitterConfig  # noqa: E402
from chunking.tokens import count_tokens, get_encoding  # noqa: E402

FOLDERS = (ROOT / "samples", ROOT / "tests" / "data")
LABELS = Path(__file__).with_name("data") / "cross_page_sentences.json"
Spans = list[tuple[int, int, str]]  # (start, end, text) per chunk, offsets in the document text


def groups_of(name: str) -> list[str]:
    suffix = Path(name).suffix.lower()
    fmt = {".pdf": "pdf", ".html": "html/docx", ".htm": "html/docx", ".docx": "html/docx", ".md": "markdown"}
    lang = "cjk" if any(f".{t}" in name for t in ("ja", "zh", "ko")) else "latin"
    return [fmt.get(suffix, "other"), lang, "all"]


def ours(max_tokens: int) -> Callable[[list], Spans]:
    splitter = SentenceTextSplitter(max_tokens=max_tokens)
    return lambda pages: [(c.char_start, c.char_end, c.text) for c in splitter.split_pages(pages)]


def peers(max_tokens: int) -> dict[str, Callable[[str], Spans]]:
    out: dict[str, Callable[[str], Spans]] = {}
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        lc = RecursiveCharacterTextSplitter(chunk_size=max_tokens, chunk_overlap=0, length_function=count_tokens,
                                            add_start_index=True)
        out["langchain recursive"] = lambda text: [
            (d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content), d.page_content)
            for d in lc.create_documents([text])]
    except ImportError:
        print("# langchain-text-splitters not installed", file=sys.stderr)
    try:
        import chonkie

        for label, cls in (("chonkie recursive", "RecursiveChunker"), ("chonkie sentence", "SentenceChunker")):
            chunker = getattr(chonkie, cls)(tokenizer=get_encoding(), chunk_size=max_tokens)
            out[label] = (lambda ch: lambda text: [(c.start_index, c.end_index, c.text) for c in ch.chunk(text)])(
                chunker)
    except Exception as error:  # chonkie raises its own errors for a missing tokenizer backend
        print(f"# chonkie unavailable: {error}", file=sys.stderr)
    try:
        import semchunk

        sc = semchunk.chunkerify(count_tokens, max_tokens)
        out["semchunk"] = lambda text: [(s, e, text[s:e]) for c, (s, e) in zip(*sc(text, offsets=True))]
    except ImportError:
        print("# semchunk not installed", file=sys.stderr)
    return out


def starts_mid_sentence(text: str, start: int, cuts: set[int]) -> bool:
    i = start
    while i > 0 and text[i - 1].isspace():
        i -= 1
    return i > 0 and i not in cuts and "\n\n" not in text[i:start].replace(" ", "").replace("\t", "")


def starts_mid_line(text: str, start: int) -> bool:
    line = text.rfind("\n", 0, start) + 1
    return bool(text[line:start].strip())


def labelled_sentences(docs: dict[str, tuple[str, list]], bounds: Boundaries) -> list[tuple[str, int, int]]:
    out = []
    for label in json.loads(LABELS.read_text(encoding="utf-8"))["breaks"]:
        text, pages = docs[label["file"]]
        page, nxt = pages[label["after_page"]], pages[label["after_page"] + 1]
        body_end = page.offset + len(page.text)
        before = [c for c in bounds.sentence_cuts(text, 0, body_end)]
        lo = before[-1] if before else page.offset
        while text[lo].isspace():
            lo += 1
        hi = bounds.next_cut(text, 0, len(text), nxt.offset)
        out.append((label["file"], lo, hi))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-tokens", type=int, default=500)
    args = parser.parse_args()
    bounds = Boundaries(SentenceSplitterConfig())
    docs: dict[str, tuple[str, list]] = {}
    for folder in FOLDERS:
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in SUPPORTED_EXTENSIONS and path.name != "SOURCES.md" and path.name not in docs:
                pages = list(parse_document(path.read_bytes(), source=path.name))
                docs[path.name] = ("".join(p.header + p.text + p.footer for p in pages), pages)
    labels = labelled_sentences(docs, bounds)
    splitters: dict[str, Callable] = {"ours (sentence)": ours(args.max_tokens), **peers(args.max_tokens)}
    header = f"{'group':<10} {'splitter':<20} {'chunks':>6} {'mean tok':>8} {'<50':>5} {'>cap':>5} " \
             f"{'mid-sent %':>10} {'mid-line %':>10} {'cross-page':>10}"
    rows: dict[tuple[str, str], list] = {}
    for label, split in splitters.items():
        for name, (text, pages) in docs.items():
            spans = split(pages) if label.startswith("ours") else split(text)
            cuts = set(bounds.sentence_cuts(text))
            kept = sum(1 for f, lo, hi in labels if f == name and any(s <= lo and hi <= e for s, e, _ in spans))
            total = sum(1 for f, _, _ in labels if f == name)
            for group in groups_of(name):
                row = rows.setdefault((group, label), [[], 0, 0, 0, 0])
                for s, _, chunk_text in spans:
                    row[0].append(count_tokens(chunk_text))
                    row[1] += starts_mid_sentence(text, s, cuts)
                    row[2] += starts_mid_line(text, s)
                row[3] += kept
                row[4] += total
    print(f"chunk quality at max_tokens={args.max_tokens} on {len(docs)} documents (samples/ + tests/data/)")
    print(header)
    for (group, label), (tokens, mid_sent, mid_line, kept, total) in sorted(rows.items()):
        n = len(tokens) or 1
        print(f"{group:<10} {label:<20} {len(tokens):>6} {statistics.fmean(tokens or [0]):>8.1f} "
              f"{sum(t < 50 for t in tokens):>5} {sum(t > args.max_tokens for t in tokens):>5} "
              f"{100 * mid_sent / n:>10.1f} {100 * mid_line / n:>10.1f} {f'{kept}/{total}' if total else '-':>10}")


if __name__ == "__main__":
    main()
