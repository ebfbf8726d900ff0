"""Language detection on the repository's corpus: ours (``chunking.documents.language``: py3langid on a cleaned
sample) and peers measured in the same run, per document and per chunk.

Usage: ``python benchmarks/language_detection.py [--corpus DIR ...]``. Documents are the corpus files whose name
carries a language tag (``name.<lang>.<ext>``); the tag is the expected answer (``zh-cn`` counts as ``zh``). The
partly translated ``aptitude-ch02s05s05.ja.html`` (about 2,000 of 32,000 letters Japanese) is reported but not
scored. Chunks are the default splitter's (500 tokens) of the scored documents, each expected in its
document's language; chunks with fewer than 20 letters are left out (every detector would guess).

Peers: ``langdetect`` (a port of Google's language-detection, seeded for repeatable answers) from
``benchmarks/requirements.txt``, left out when not installed; and a script baseline (the most frequent Unicode
script: Han → zh, kana → ja, Hangul → ko, Latin → en), which shows what the scripts alone give away.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunking.documents.language import MIN_LETTERS, detect_language  # noqa: E402
from chunking.documents.splitter import splitter_for  # noqa: E402
from chunking.parsers import SUPPORTED_EXTENSIONS, parse_document  # noqa: E402
from chunking.settings import Settings  # noqa: E402
from bench_args import existing  # noqa: E402

MIXED = {"aptitude-ch02s05s05.ja.html"}
_TAG = re.compile(r"\.([a-z]{2}(?:-[a-z]{2})?)\.[a-z]+$")
_LETTER = re.compile(r"[^\W\d_]")


def _script(text: str) -> str:
    counts = {"zh": 0, "ja": 0, "ko": 0, "en": 0}
    for ch in text:
        code = ord(ch)
        if 0x3040 <= code <= 0x30FF:
            counts["ja"] += 3  # kana marks Japanese even among many Han characters
        elif 0x4E00 <= code <= 0x9FFF:
            counts["zh"] += 1
        elif 0xAC00 <= code <= 0xD7AF:
            counts["ko"] += 1
        elif ch.isascii() and ch.isalpha():
            counts["en"] += 1
    best = max(counts, key=counts.get)
    return best if counts[best] else ""


def _peers() -> dict:
    peers = {"ours (py3langid)": lambda text: detect_language([text])[0], "script baseline": _script}
    try:
        from langdetect import DetectorFactory, detect
        from langdetect.lang_detect_exception import LangDetectException

        DetectorFactory.seed = 0

        def langdetect(text: str) -> str:
            try:
                return detect(text).split("-")[0]
            except LangDetectException:
                return ""

        peers["langdetect"] = langdetect
    except ImportError:
        print("langdetect: not installed (pip install -r benchmarks/requirements.txt)")
    return peers


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--corpus", action="append", type=existing, default=None,
                        help="folders of tagged documents (default: ../shared/corpus, samples, tests/data)")
    args = parser.parse_args()
    folders = args.corpus or [ROOT.parent / "shared" / "corpus", ROOT / "samples", ROOT / "tests" / "data"]
    files = {}
    for folder in folders:
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            if _TAG.search(path.name) and path.suffix.lower() in SUPPORTED_EXTENSIONS:
                files.setdefault(path.name, path)
    peers = _peers()
    _identifier_warm = detect_language(["warm the model up: load it once before timing"])
    del _identifier_warm
    settings = Settings.from_env({})
    doc_rows, chunk_texts = [], []
    for name, path in sorted(files.items()):
        expected = _TAG.search(name).group(1).split("-")[0]
        data = path.read_bytes()
        pages = parse_document(data, source=name)
        text = "\n".join(p.text for p in pages)
        doc_rows.append((name, expected, {peer: fn(text) for peer, fn in peers.items()}))
        if name not in MIXED:
            for chunk in splitter_for(name, settings).split(pages):
                if len(_LETTER.findall(chunk.text)) >= MIN_LETTERS:
                    chunk_texts.append((expected, chunk.text))
    names = list(peers)
    print(f"\nper document ({len(doc_rows)} documents; * = mixed, not scored)\n")
    print("| document | tag | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for name, expected, answers in doc_rows:
        mark = "*" if name in MIXED else ""
        print(f"| {name}{mark} | {expected} | " + " | ".join(answers[n] or "-" for n in names) + " |")
    print(f"\nper chunk ({len(chunk_texts)} chunks of the scored documents, default splitter)\n")
    print("| detector | correct | accuracy | ms per chunk | vs ours |")
    print("|---|---|---|---|---|")
    timings = {}
    for peer in names:
        started = time.perf_counter()
        correct = sum(1 for expected, text in chunk_texts if peers[peer](text) == expected)
        timings[peer] = (time.perf_counter() - started) * 1000 / max(1, len(chunk_texts))
        scored = sum(1 for row in doc_rows if row[0] not in MIXED and row[2][peer] == row[1])
        timings[peer, "docs"] = scored
        timings[peer, "acc"] = correct / max(1, len(chunk_texts))
        timings[peer, "n"] = correct
    base = timings[names[0]]
    for peer in names:
        print(f"| {peer} | {timings[peer, 'n']} | {timings[peer, 'acc']:.1%} | {timings[peer]:.2f} | "
              f"{timings[peer] / base:.2f}× time |")


if __name__ == "__main__":
    main()
