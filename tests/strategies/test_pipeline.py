"""The strategies in the pipeline, in-process (local ledger, local index): SPLITTERS names, the version
fingerprint, stage 1 + stage 2 records, the cache across runs, fallbacks in the ledger, embedding texts."""

from __future__ import annotations

import pytest

from chunking.documents.splitter import splitter_for
from chunking.embeddings import OfflineLexicalEmbedder
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.pipeline.stage_two import run_stage_one, run_stage_two
from chunking.services import reset_strategy_clients, strategy_clients
from chunking.settings import Settings
from chunking.storage.claim_check import MemoryPayloadStore
from chunking.strategies import prompts
from chunking.tokens import count_tokens

TEXT = "\n\n".join(
    f"# Part {p}\n" + " ".join(f"Sentence {p}.{i} explains topic {p} with detail {i * 7}." for i in range(8))
    for p in range(6)
).encode()


@pytest.fixture(autouse=True)
def fresh_clients():
    reset_strategy_clients()
    yield
    reset_strategy_clients()


def settings_for(tmp_path, splitters: str, **env: str) -> Settings:
    return Settings.from_env({"SPLITTERS": splitters, "CHUNKING_STATE_DIR": str(tmp_path / "state"),
                              "SPLIT_MAX_TOKENS": "60", "SPLIT_MAX_CHARS": "300", **env})


class Pipeline:
    def __init__(self, settings: Settings, tmp_path) -> None:
        self.settings = settings
        self.ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
        self.index = LocalIndex(tmp_path / "index.sqlite3", settings.embedding_dimensions)
        self.embedder = OfflineLexicalEmbedder(settings.embedding_dimensions)
        self.payloads = MemoryPayloadStore()

    def ingest(self, source: str, data: bytes = TEXT, force: bool = False):
        one = run_stage_one(data, source=source, container="c", settings=self.settings, payloads=self.payloads,
                            ledger=self.ledger, force=force)
        two = [run_stage_two(m, settings=self.settings, embedder=self.embedder, index=self.index,
                             payloads=self.payloads, ledger=self.ledger) for m in one.messages]
        return one, two

    def records(self, one):
        return sorted(self.index.records_of(one.doc_id), key=lambda r: r.ordinal)


@pytest.mark.parametrize("name", ["semantic", "hierarchical", "small_to_big", "sentence_window", "propositions",
                                  "llm", "router", "semantic+enrich", "markdown+enrich"])
def test_every_strategy_through_both_stages(tmp_path, name):
    p = Pipeline(settings_for(tmp_path, f".md={name}"), tmp_path)
    one, two = p.ingest("guide.md")
    assert one.error is None and one.chunks > 0
    records = p.records(one)
    assert len(records) == one.chunks and p.ledger.get(one.doc_id).status == "indexed"
    ids = {r.id for r in records}
    assert all(r.parent_id is None or r.parent_id in ids for r in records)
    embedded = [r for r in records if r.has_vector]
    assert embedded and all(0 < count_tokens(r.text_to_embed) <= 8191 for r in embedded)
    assert sum(t.embedded for t in two) == len({r.vector_key for r in embedded})
    assert all(r.token_count == count_tokens(r.content) for r in records)


def test_names_and_fingerprints(tmp_path, monkeypatch):
    def fp(splitters: str, **env: str) -> str:
        return splitter_for("a.md", settings_for(tmp_path, splitters, **env)).fingerprint

    base = fp(".md=semantic")
    assert base != fp(".md=markdown") and base != fp(".md=semantic+enrich")
    assert base != fp(".md=semantic", SEMANTIC_BREAKPOINT_AMOUNT="90")
    assert base != fp(".md=semantic", EMBEDDING_DIMENSIONS="128")  # another embedding model
    assert base == fp(".md=semantic", PROPOSITION_MAX="7")  # not a parameter of this strategy
    propositions = fp(".md=propositions")
    assert propositions != fp(".md=propositions", CHAT_BACKEND="openai", CHAT_MODEL="m1", OPENAI_BASE_URL="http://x")
    monkeypatch.setitem(prompts.PROMPTS, "propositions", prompts.Prompt("propositions", "propositions-v2",
                                                                        prompts.PROMPTS["propositions"].system))
    assert propositions != fp(".md=propositions")  # another prompt version
    assert fp(".md=hierarchical") != fp(".md=hierarchical", HIERARCHY_LEVELS="1000,100")
    with pytest.raises(ValueError, match="unknown splitter 'fancy'"):
        fp(".md=fancy")
    with pytest.raises(ValueError, match="unknown splitter 'fancy'"):
        fp(".md=fancy+enrich")


def test_small_to_big_stores_parents_without_vectors(tmp_path):
    p = Pipeline(settings_for(tmp_path, ".md=small_to_big", SMALL_TO_BIG_TOKENS="80,20"), tmp_path)
    one, _ = p.ingest("guide.md")
    records = p.records(one)
    parents = [r for r in records if r.level == 0]
    assert parents and all(not r.has_vector and r.parent_id is None for r in parents)
    assert all(r.has_vector and r.parent_id for r in records if r.level == 1)
    assert all(r.id.startswith(f"{one.doc_id}-{one.version[:8]}-") for r in records)


def test_second_run_of_unchanged_text_makes_no_model_call(tmp_path):
    settings = settings_for(tmp_path, ".md=propositions,.txt=semantic,.rst=llm")
    p = Pipeline(settings, tmp_path)
    clients = strategy_clients(settings)
    for source in ("a.md", "b.txt", "c.rst"):
        p.ingest(source)
    first = clients.model_calls
    assert clients.chat.requests > 0 and clients.embedder.requests > 0
    for source in ("a.md", "b.txt", "c.rst"):
        one, _ = p.ingest(source, force=True)  # re-split although indexed
        assert one.chunks > 0
        p.ingest(f"copy/{source}")  # the same text under another name
    assert clients.model_calls == first
    reset_strategy_clients()  # a new process: the cache is on disk
    again = strategy_clients(settings)
    p.ingest("third/a.md")
    assert again.model_calls == 0


def test_a_fallback_is_recorded_in_chunks_and_ledger(tmp_path, monkeypatch):
    settings = settings_for(tmp_path, ".md=propositions")
    chat = strategy_clients(settings).chat

    def down(*args, **kwargs):
        raise TimeoutError("chat service timed out")

    monkeypatch.setattr(chat, "complete", down)
    p = Pipeline(settings, tmp_path)
    one, _ = p.ingest("guide.md")
    entry = p.ledger.get(one.doc_id)
    assert entry.status == "indexed"
    assert entry.note.startswith("fallback: propositions: call failed: TimeoutError: chat service timed out")
    assert any(r.kind == "proposition" for r in p.records(one))  # the passages' sentences stand in


def test_enriched_chunks_never_reuse_a_vector_of_other_text(tmp_path):
    p = Pipeline(settings_for(tmp_path, ".md=markdown+enrich", ENRICH_NEIGHBOUR_SENTENCES="0"), tmp_path)
    same = b"# Tea\nIt costs 5 dollars.\n\n# Coffee\nIt costs 5 dollars.\n"
    one, two = p.ingest("menu.md", same)
    records = p.records(one)
    assert [r.content for r in records] == ["# Tea\nIt costs 5 dollars.", "# Coffee\nIt costs 5 dollars."]
    assert [r.embedding_text for r in records] == ["menu.md › Tea\n\n# Tea\nIt costs 5 dollars.",
                                                   "menu.md › Coffee\n\n# Coffee\nIt costs 5 dollars."]
    assert sum(t.embedded for t in two) == 2
    plain = Pipeline(settings_for(tmp_path, ".md=markdown"), tmp_path)
    plain.index, plain.ledger = p.index, p.ledger
    _, two = plain.ingest("plain.md", same)
    assert sum(t.embedded for t in two) == 2 and sum(t.reused for t in two) == 0  # content alone: new vectors


def test_enrichment_breadcrumb_has_the_heading_path_of_heading_formats(tmp_path):
    p = Pipeline(settings_for(tmp_path, ".md=llm+enrich", ENRICH_NEIGHBOUR_SENTENCES="0"), tmp_path)
    one, _ = p.ingest("guide.md")
    records = p.records(one)
    assert records and all(r.embedding_text.startswith(f"guide.md › {' › '.join(r.headings)}\n\n") for r in records)
    assert {r.headings for r in records} >= {("Part 0",), ("Part 5",)}
