"""The benchmark corpus: every distinct document the repository and ``shared/corpus`` hold, parsed once into pages.

Shared by ``split_bench.py`` and ``pipeline_bench.py``; ``files_with_suffixes`` lists one format's files for the
parse benchmarks (``pdf_bench.py``, ``html_bench.py``, ``docx_bench.py``). Documents come from ``samples/``, ``tests/data/`` (when
present) and ``../shared/corpus``; a file whose bytes were already seen is skipped, and so is a page whose text
was already seen, so no text is measured twice (``SOURCES.md`` and ``NOTICE.md``, the licence lists, are not documents, nor are the service specs and
resource types in ``tests/data``'s subfolders). Language groups come from the file name's language tag
(``amc-manual.en.pdf``): ``cjk`` for ja/zh/ko, ``en`` for en or no tag, ``other`` for the rest.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunking.model import Page  # noqa: E402
from chunking.parsers import SUPPORTED_EXTENSIONS, ParseError, parse_document  # noqa: E402

TEST_DATA = ROOT / "tests" / "data"
FOLDERS = (ROOT / "samples", TEST_DATA, ROOT.parent / "shared" / "corpus")
_NOT_DOCUMENTS = {"SOURCES.md", "NOTICE.md"}  # licence lists
_TAG = re.compile(r"\.([a-z]{2})(?:-[a-z]{2,4})?\.[A-Za-z0-9]+$")


@dataclass(frozen=True)
class Document:
    """One parsed document: its file, size in bytes, language group and distinct pages (offsets renumbered)."""

    path: Path
    size_bytes: int
    group: str
    pages: list[Page]

    @property
    def chars(self) -> int:
        return sum(len(p.text) for p in self.pages)


def language_group(name: str) -> str:
    """``cjk``, ``en`` or ``other`` from the language tag of a file name (no tag: ``en``)."""
    tag = _TAG.search(name)
    lang = tag.group(1) if tag else "en"
    return "cjk" if lang in ("ja", "zh", "ko") else "en" if lang == "en" else "other"


def corpus_files() -> list[Path]:
    """Every supported file of the corpus folders, each content once (first folder wins)."""
    seen: set[str] = set()
    files: list[Path] = []
    for folder in FOLDERS:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or path.suffix.lower() not in SUPPORTED_EXTENSIONS or path.name in _NOT_DOCUMENTS:
                continue
            if folder == TEST_DATA and path.parent != folder:  # tests/data's subfolders: service specs, types
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                files.append(path)
    return files


def files_with_suffixes(suffixes: tuple[str, ...], extra: list[Path] = ()) -> list[Path]:
    """The files ending in one of *suffixes* (lower case, with the dot) in the corpus folders and in *extra*
    (files or folders), each content once (first seen wins)."""
    seen: set[str] = set()
    files = []
    for place in [*FOLDERS, *extra]:
        paths = [place] if place.is_file() else sorted(place.rglob("*")) if place.is_dir() else []
        for path in paths:
            if path.is_file() and path.suffix.lower() in suffixes:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                if digest not in seen:
                    seen.add(digest)
                    files.append(path)
    return files


def load_documents() -> list[Document]:
    """Parse each corpus file once; pages whose text appeared before (in any document) are dropped."""
    seen_text: set[str] = set()
    documents: list[Document] = []
    for path in corpus_files():
        data = path.read_bytes()
        try:
            parsed = parse_document(data, source=path.name)
        except ParseError as error:
            print(f"# skipped {path.name}: {error}", file=sys.stderr)
            continue
        pages, offset = [], 0
        for page in parsed:
            if not page.text.strip() or page.text in seen_text:
                continue
            seen_text.add(page.text)
            pages.append(Page(len(pages), offset, page.text))
            offset += len(page.text)
        if pages:
            documents.append(Document(path, len(data), language_group(path.name), pages))
    return documents
