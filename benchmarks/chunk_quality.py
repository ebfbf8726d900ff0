"""Chunk quality of our sentence splitter and its peers on the in-repo corpus (``samples/`` + ``tests/data/``,
the same documents as the shared corpus), per document group.

Usage: ``python benchmarks/chunk_quality.py [--max-tokens 500] [--only ours]``. Peers come from
``benchmarks/requirements.txt``; one that is not installed is reported as missing and left out. Every splitter
gets the same text of each document: for ours the parsed pages (furniture in ``Page.header``/``footer``,
offsets counting it); for the peers the document text those offsets refer to, every page's
``header + text + footer`` joined, so furniture removal is credited to ours only where it happens. Each chunk
is located in that text by its start offset (ours: ``char_start``; LangChain: ``start_index``; chonkie:
``start_index``; semchunk: ``offsets=True``) and its own text; tokens are ``cl100k_base`` of the chunk text,
for every splitter. Only prose formats are measured (PDF, HTML, DOCX, Markdown): CSV and JSON have no sentences
and go to record splitters in the pipeline.

Columns, per group (pdf, html/docx, markdown by format; cjk and latin by language tag; all); each metric is
defined in ``benchmarks/quality_metrics.py`` and computed the same way for every splitter:

- ``chunks``, ``mean tok``: number of chunks and their mean token count;
- ``<50``: chunks under 50 tokens; ``>cap``: chunks over ``--max-tokens``;
- ``mid-sent %``: chunks whose first character follows no sentence end, blank line or start of text (page
  furniture skipped), see ``starts_mid_sentence``;
- ``mid-line %``: chunks whose first character is not the first non-blank one of its line;
- ``mid-word``: chunk boundaries with a letter or digit on both sides (outside spaceless scripts);
- ``torn``: figure blocks (tables, images) that a chunk cuts and leaves with tags open;
- ``dup``: non-whitespace characters of the chunks over those of the text the splitter was given;
- ``lost``: non-whitespace body characters (furniture excluded) in no chunk;
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from quality_metrics import (  # noqa: E402
    Doc,
    Spans,
    duplication_ratio,
    lost_characters,
    make_doc,
    mid_word_cuts,
    sentence_kept,
    starts_mid_line,
    starts_mid_sentence,
    torn_figures,
)

from chunking.parsers import parse_document  # noqa: E402
from chunking.splitters.sentence import SentenceTextSplitter  # noqa: E402
from chunking.splitters.sentence.boundaries import Boundaries  # noqa: E402
from chunking.splitters.sentence.config import SentenceSplitterConfig  # noqa: E402
from chunking.tokens import count_tokens, get_encoding  # noqa: E402
from bench_args import at_least  # noqa: E402

FOLDERS = (ROOT / "samples", ROOT / "tests" / "data")
LABELS = Path(__file__).with_name("data") / "cross_page_sentences.json"
FORMATS = {".pdf": "pdf", ".html": "html/docx", ".htm": "html/docx", ".docx": "html/docx", ".md": "markdown"}
OURS = "ours (sentence)"


def groups_of(name: str) -> list[str]:
    lang = "cjk" if any(f".{t}" in name for t in ("ja", "zh", "ko")) else "latin"
    return [FORMATS[Path(name).suffix.lower()], lang, "all"]


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


def labelled_sentences(docs: dict[str, tuple[Doc, list]], bounds: Boundaries) -> list[tuple[str, int, int]]:
    """``(file, start, end)`` of each hand-labelled sentence cut by a page break, in document offsets."""
    out = []
    for label in json.loads(LABELS.read_text(encoding="utf-8"))["breaks"]:
        doc, pages = docs[label["file"]]
        text = doc.text
        page, nxt = pages[label["after_page"]], pages[label["after_page"] + 1]
        before = bounds.sentence_cuts(text, 0, page.offset + len(page.text))
        lo = before[-1] if before else page.offset
        while text[lo].isspace():
            lo += 1
        out.append((label["file"], lo, bounds.next_cut(text, 0, len(text), nxt.offset)))
    return out


COLUMNS = (("chunks", 6), ("mean tok", 8), ("<50", 5), (">cap", 5), ("mid-sent %", 10), ("mid-line %", 10),
           ("mid-word", 8), ("torn", 5), ("dup", 5), ("lost", 5), ("cross-page", 10))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Columns are defined in the module docstring and quality_metrics.py.")
    parser.add_argument("--max-tokens", type=at_least(1), default=500, help="chunk size of every splitter (tokens)")
    parser.add_argument("--only", choices=("ours", "all"), default="all", help="measure only ours, or all")
    args = parser.parse_args()
    bounds = Boundaries(SentenceSplitterConfig())
    docs: dict[str, tuple[Doc, list]] = {}
    for folder in FOLDERS:
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in FORMATS and path.name not in docs:
                pages = list(parse_document(path.read_bytes(), source=path.name))
                docs[path.name] = (make_doc(pages, bounds), pages)
    labels = labelled_sentences(docs, bounds)
    splitters: dict[str, Callable] = {OURS: ours(args.max_tokens)}
    if args.only == "all":
        splitters.update(peers(args.max_tokens))
    rows: dict[tuple[str, str], dict] = {}
    for label, split in splitters.items():
        for name, (doc, pages) in docs.items():
            given = "".join(p.text for p in pages) if label == OURS else doc.text
            spans = split(pages) if label == OURS else split(doc.text)
            mine = [(f, lo, hi) for f, lo, hi in labels if f == name]
            out_chars, in_chars = duplication_ratio(doc, spans, given)
            for group in groups_of(name):
                row = rows.setdefault((group, label), dict(tokens=[], sent=0, line=0, word=0, torn=0, out=0,
                                                           inp=0, lost=0, kept=0, total=0))
                for s, _, chunk_text in spans:
                    row["tokens"].append(count_tokens(chunk_text))
                    row["sent"] += starts_mid_sentence(doc, s)
                    row["line"] += starts_mid_line(doc, s)
                row["word"] += mid_word_cuts(doc, spans)
                row["torn"] += torn_figures(doc, spans)
                row["out"] += out_chars
                row["inp"] += in_chars
                row["lost"] += lost_characters(doc, spans)
                row["kept"] += sum(sentence_kept(spans, lo, hi) for _, lo, hi in mine)
                row["total"] += len(mine)
    print(f"chunk quality at max_tokens={args.max_tokens} on {len(docs)} documents (samples/ + tests/data/)")
    print(f"{'group':<10} {'splitter':<20} " + " ".join(f"{name:>{width}}" for name, width in COLUMNS))
    for (group, label), r in sorted(rows.items()):
        tokens, n = r["tokens"], len(r["tokens"]) or 1
        values = (len(tokens), f"{statistics.fmean(tokens or [0]):.1f}", sum(t < 50 for t in tokens),
                  sum(t > args.max_tokens for t in tokens), f"{100 * r['sent'] / n:.1f}", f"{100 * r['line'] / n:.1f}",
                  r["word"], r["torn"], f"{r['out'] / max(r['inp'], 1):.2f}", r["lost"],
                  f"{r['kept']}/{r['total']}" if r["total"] else "-")
        print(f"{group:<10} {label:<20} " + " ".join(f"{v:>{w}}" for v, (_, w) in zip(values, COLUMNS)))


if __name__ == "__main__":
    main()
