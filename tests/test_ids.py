import re

from chunking.ids import chunk_id, content_hash, doc_id, document_version

KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_\-=]*$")


def test_doc_id_uses_full_path_and_is_key_safe():
    a, b = doc_id("documents", "a/x.pdf"), doc_id("documents", "b/x.pdf")
    assert a != b
    assert a == doc_id("documents", "a/x.pdf") == doc_id("documents/", "/a/x.pdf")
    assert doc_id("other", "a/x.pdf") != a
    assert KEY.match(a) and len(a) == 33 and a.startswith("d")


def test_chunk_id_format():
    d = doc_id("documents", "My File (1).pdf")
    v = document_version("ab" * 32, "fp")
    key = chunk_id(d, v, 7)
    assert key == f"{d}-{v[:8]}-000007"
    assert KEY.match(key)


def test_version_changes_with_bytes_or_settings():
    v = document_version("00" * 32, "fp1")
    assert len(v) == 24
    assert v == document_version("00" * 32, "fp1")
    assert v != document_version("00" * 32, "fp2")
    assert v != document_version("01" * 32, "fp1")


def test_content_hash():
    assert content_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
