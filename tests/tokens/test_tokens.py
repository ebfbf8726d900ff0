import socket

import pytest

from chunking import tokens


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a socket fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_loads_shipped_bpe_without_network(no_network, monkeypatch, tmp_path):
    # An empty cache dir: if tiktoken's own loader were used it would have to download.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tokens.get_encoding.cache_clear()
    try:
        enc = tokens.get_encoding("cl100k_base")
        assert enc.name == "cl100k_base"
        assert enc.n_vocab == 100277
        assert enc.encode_ordinary("hello world") == [15339, 1917]
        assert list(tmp_path.iterdir()) == []
    finally:
        tokens.get_encoding.cache_clear()


def test_counts_match_known_values():
    assert tokens.count_tokens("Sentence one. Sentence two is slightly longer. Final short one.") == 13
    assert tokens.count_tokens("") == 0
    # Special-token lookalikes are ordinary text: counted, never raising.
    assert tokens.count_tokens("<|endoftext|>") == 7
    assert tokens.count_tokens_batch(["hello world", "", "这是句子"]) == [2, 0, tokens.count_tokens("这是句子")]
    counter = tokens.token_counter()
    assert counter("hello world") == 2


def test_hash_mismatch_is_refused(monkeypatch, tmp_path):
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\n")
    path, sha, pat, special = tokens.BPE_FILES["cl100k_base"]
    monkeypatch.setitem(tokens.BPE_FILES, "cl100k_base", (bad, sha, pat, special))
    tokens.get_encoding.cache_clear()
    try:
        with pytest.raises(tokens.TokenizerIntegrityError, match="SHA-256"):
            tokens.get_encoding("cl100k_base")
    finally:
        tokens.get_encoding.cache_clear()


def test_unknown_encoding_is_a_clear_error():
    with pytest.raises(ValueError, match="o200k_base.*available: cl100k_base"):
        tokens.get_encoding("o200k_base")
