import re

from chunking.ids import chunk_id, content_hash, doc_id, document_version

KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_\-=]*$")


def test_doc_id_uses_full_path_and_is_key_safe():
    a, b = doc_id("documents", "a/x.pdf"), doc_id("documents", "b/x.pdf")
    assert a != b
    assert a == doc_id("documents", "a/x.pdf") == doc_id("documents/", "a/x.pdf")
    # Blob names exactly as storage has them: a leading "/" or an empty segment makes another blob.
    assert len({a, doc_id("documents", "/a/x.pdf"), doc_id("documents", "a//x.pdf")}) == 3
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


def test_the_namespace_is_part_of_the_version_so_of_every_chunk_key():
    import hashlib

    d = doc_id("documents", "guide.txt")
    a, b = document_version("00" * 32, "fp1", "documents-1f0c9a2e"), document_version("00" * 32, "fp1", "documents-77")
    assert a != b and chunk_id(d, a, 0) != chunk_id(d, b, 0)
    assert a == hashlib.sha256(("00" * 32 + ":fp1:documents-1f0c9a2e").encode()).hexdigest()[:24]
    # Without one, the version of the scheme before (what the keys were until they changed once).
    assert document_version("00" * 32, "fp1", "") == hashlib.sha256(("00" * 32 + ":fp1").encode()).hexdigest()[:24]


def test_content_hash():
    assert content_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_blob_event_paths_resolve_to_the_id_of_the_create():
    from chunking.pipeline.reconcile import parse_blob_events

    def event(url):
        return '{"eventType": "Microsoft.Storage.BlobDeleted", "data": {"url": "%s"}}' % url

    for name in ("dir//x.txt", "/abs/x.txt", "abs/x.txt", "a b/%C3%A9.txt"):
        (parsed,) = parse_blob_events(event(f"https://acct.blob.core.windows.net/docs/{name}"))
        assert parsed.container == "docs"
        assert parsed.path == name.replace("%C3%A9", "é")
    (local,) = parse_blob_events(event("http://127.0.0.1:10000/devstoreaccount1/docs//abs/x.txt"))
    assert (local.container, local.path) == ("docs", "/abs/x.txt")
    assert doc_id("docs", local.path) != doc_id("docs", "abs/x.txt")
