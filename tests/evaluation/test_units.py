"""The pieces of retrieval evaluation and ranking with exact values: metrics, question sets, the judge, fusion,
stop words and the highlighted passage."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from chunking.embeddings.stopwords import is_stop_word
from chunking.evaluation.judge import answer_key, matches_source
from chunking.evaluation.metrics import hit_at, ndcg_at, reciprocal_rank, score_question, summarise
from chunking.evaluation.questions import Question, QuestionSetError, dump_questions, load_questions
from chunking.evaluation.runner import parse_strategy
from chunking.index.fusion import FusionOptions, bm25_idf, fuse
from chunking.model import ChunkRecord, Page
from chunking.retrieval.highlight import highlight


def test_metrics_exact_values():
    ranks = [False, True, False, True]
    assert (hit_at(ranks, 1), hit_at(ranks, 2), hit_at([], 3)) == (0.0, 1.0, 0.0)
    assert reciprocal_rank(ranks) == 0.5 and reciprocal_rank([False]) == 0.0
    # DCG = 1/log2(3) + 1/log2(5); ideal with 2 relevant = 1 + 1/log2(3).
    assert ndcg_at(ranks, 10, 2) == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))
    assert ndcg_at([True], 10, 1) == 1.0 and ndcg_at([False], 10, 0) == 0.0
    scores = [score_question("q1", "en", [True], 1), score_question("q2", "ja", [False, False, True], 1)]
    assert [s.rank for s in scores] == [1, 3]
    summary = summarise(scores)
    assert (summary.hit1, summary.hit3, summary.mrr) == (0.5, 1.0, pytest.approx((1 + 1 / 3) / 2))
    assert set(summary.by_lang) == {"en", "ja"} and summary.by_lang["ja"].hit1 == 0.0


def test_question_set_round_trip_and_errors(tmp_path: Path):
    path = tmp_path / "q.jsonl"
    questions = [Question("¿Cómo apago?", "a.docx", (), "poweroff", "es"), Question("Print?", "m.pdf", (60, 61))]
    path.write_text("# comment\n\n" + dump_questions(questions), encoding="utf-8")
    assert load_questions(path) == questions
    for line, message in [('{"question": "x", "source": "a"}', r"q\.jsonl:1: give \"page\" or \"passage\""),
                          ('{"question": "x", "source": "a", "page": 0}', "page number ≥ 1"),
                          ('{"question": "", "source": "a", "page": 1}', '"question" must be a non-empty'),
                          ('{"question": "x", "source": "a", "page": 1, "pgae": 2}', "unknown field"),
                          ("not json", "not JSON")]:
        path.write_text(line + "\n", encoding="utf-8")
        with pytest.raises(QuestionSetError, match=message):
            load_questions(path)


def _record(source: str, start: int, end: int, page: int = 0) -> ChunkRecord:
    return ChunkRecord(id=f"r{start}", doc_id="d", version="v", source=source, sourcepage=source, ordinal=0,
                       page_start=page, page_end=page, char_start=start, char_end=end, content="",
                       content_hash="", token_count=1, headings=())


def test_judge_finds_the_passage_across_white_space_and_case():
    pages = [Page(0, 0, "Intro.\n"), Page(1, 7, "The   MAXIMUM is\n4,095 students.")]
    key = answer_key(Question("max?", "m.pdf", (2,), "maximum is 4,095"), "docs/m.pdf", pages)
    assert key.spans == ((13, 29),)
    assert key.relevant(_record("docs/m.pdf", 20, 40, page=1))
    assert not key.relevant(_record("docs/m.pdf", 0, 13, page=1))  # ends where the passage starts
    assert not key.relevant(_record("docs/other.pdf", 20, 40, page=1))
    assert answer_key(Question("p?", "m.pdf", (1,)), "docs/m.pdf", pages).relevant(_record("docs/m.pdf", 0, 3))
    with pytest.raises(ValueError, match="not found in docs/m.pdf on page 1"):
        answer_key(Question("max?", "m.pdf", (1,), "4,095"), "docs/m.pdf", pages)
    assert matches_source("m.pdf", "docs/m.pdf") and not matches_source("m.pdf", "docs/am.pdf")


def test_strategy_specs():
    assert parse_strategy("default").splitter == "default"
    spec = parse_strategy("sentence  SPLIT_MAX_TOKENS=250")
    assert (spec.label, spec.splitter, dict(spec.env)) == ("sentence SPLIT_MAX_TOKENS=250", "sentence",
                                                          {"SPLIT_MAX_TOKENS": "250"})
    assert parse_strategy(".pdf=semantic,.md=markdown").splitter == ".pdf=semantic,.md=markdown"
    with pytest.raises(ValueError, match="one splitter at most"):
        parse_strategy("sentence semantic")


def test_score_fusion_exact_values():
    options = FusionOptions("score", 0.6, 60, 0.2)
    fused = fuse([("a", 3.0), ("b", 1.0)], [("c", 0.9), ("b", 0.5), ("d", 0.1)], options,
                 lexical_reference=2.0, cosines={"a": -0.2})
    # a: 0.6 * min(1, 3/2) + 0.4 * 0; b: 0.6 * 0.5 + 0.4 * 0.5; c: 0.4 * 0.9; d is under the floor.
    assert [(f.id, round(f.score, 6), f.lexical, f.vector) for f in fused] == [
        ("a", 0.6, 1.0, 0.0), ("b", 0.5, 0.5, 0.5), ("c", 0.36, None, 0.9)]
    keyword_only = fuse([("a", 1.0)], [], options, lexical_reference=2.0, use_vector=False)
    assert [(f.id, f.score) for f in keyword_only] == [("a", 0.5)]
    assert fuse([], [("d", 0.1)], options, lexical_reference=0.0) == []  # nothing in common: no hits


def test_keyword_parts_capped_at_one_keep_bm25_order():
    # z and a both reach the reference (capped at 1): BM25 orders them, not their ids.
    lexical = [("z", 9.0), ("a", 5.0), ("m", 1.0)]
    keyword_only = fuse(lexical, [], FusionOptions("score", 0.6, 60, 0.2), lexical_reference=2.0, use_vector=False)
    assert [(f.id, f.score, f.lexical) for f in keyword_only] == [("z", 1.0, 1.0), ("a", 1.0, 1.0), ("m", 0.5, 0.5)]
    hybrid = fuse(lexical, [("m", 0.9), ("a", 0.3), ("z", 0.3)], FusionOptions("score", 0.5, 60, 0.2),
                  lexical_reference=2.0)
    # m: 0.5 * 0.5 + 0.5 * 0.9; z and a: 0.5 * 1 + 0.5 * 0.3 each, z first by BM25.
    assert [(f.id, round(f.score, 6)) for f in hybrid] == [("m", 0.7), ("z", 0.65), ("a", 0.65)]


def test_rrf_fusion_is_scaled_to_one():
    fused = fuse([("a", 5.0), ("b", 4.0)], [("b", 0.9), ("a", 0.8)], FusionOptions("rrf", 0.5, 60, 0.0),
                 lexical_reference=1.0)
    assert [f.id for f in fused] == ["a", "b"]  # tied in score, ordered by id
    assert fused[0].score == pytest.approx(61 * (0.5 / 61 + 0.5 / 62))
    with pytest.raises(ValueError, match="fusion method"):
        FusionOptions("max")


def test_bm25_idf_matches_fts5():
    assert bm25_idf(100, 1) == pytest.approx(math.log(99.5 / 1.5))
    assert bm25_idf(100, 90) == 1e-6  # floored, as FTS5 does


@pytest.mark.parametrize("word", ["the", "de", "der", "les", "ます", "の", "的", "そして"[:2], "그리고"])
def test_stop_words_per_language(word: str):
    assert is_stop_word(word)


@pytest.mark.parametrize("word", ["printing", "son", "car", "war", "東京", "パッ", "設定", "debian"])
def test_content_words_are_kept(word: str):
    assert not is_stop_word(word)


def test_highlight_marks_inflected_query_words_in_the_best_window():
    text = "Intro words. " * 40 + "Printed papers: print the exam for students. " + "Tail words. " * 40
    h = highlight(text, "How to print exams", width_chars=80)
    rendered = h.render("[", "]")
    assert "[Printed] papers: [print] the [exam] for students." in rendered
    assert rendered.startswith("…") and rendered.endswith("…")
    assert highlight("東京都に住む", "京都").render("[", "]") == "東[京都]に住む"
    assert highlight("nothing here", "absent").marks == ()


def _chunk(source: str, ordinal: int, content: str, page: int = 0) -> ChunkRecord:
    return ChunkRecord(id=f"{source}-{ordinal}", doc_id=source, version="v", source=source, sourcepage=source,
                       ordinal=ordinal, page_start=page, page_end=page, char_start=0, char_end=len(content),
                       content=content, content_hash="", token_count=1, headings=())


class ScriptedChat:
    name = "scripted/model"
    requests = 0

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers

    def complete(self, messages, **kwargs) -> str:
        self.requests += 1
        return self.answers.pop(0)


def test_drafted_questions_rule_based_and_from_a_chat_model():
    from chunking.evaluation.generate import draft_questions

    long = "The scanner must be set to three hundred dots per inch for the marks to be read."
    records = [_chunk("m.pdf", 0, "Too short."), _chunk("m.pdf", 1, f"Intro line here. {long} End.", page=4),
               _chunk("m.pdf", 2, "<td>a</td><td>b</td> cells cells cells cells cells cells cells cells.", page=5)]
    drafted = draft_questions(records, 5, in_document=lambda source, text: True)
    assert [(q.question, q.passage, q.pages) for q in drafted] == [
        ("scanner set three hundred dots inch marks read?", long, ())]
    assert drafted[0].note == "drafted by rules; check by hand"
    chat = ScriptedChat(['{"question": "What resolution?", "answer": "' + long + '"}', "not json"])
    drafted = draft_questions(records, 2, in_document=lambda source, text: text == long, chat=chat)
    assert [(q.question, q.passage, q.pages) for q in drafted] == [("What resolution?", long, ())]
    assert chat.requests == 2 and drafted[0].note == "drafted by scripted/model; check by hand"
