"""Small things a user meets: names with a trailing blank, connection strings written by hand, services that
cannot be reached named right, limits the same for every format, missing files, exit statuses that agree, and
``search --json`` hits with every document field."""

from __future__ import annotations

import json
import socket
import shutil

import pytest

from chunking.formats import extension_of
from chunking.model import DOCUMENT_FIELDS
from chunking.parsers import parse_document
from chunking.settings import Settings, SettingsError
from tests.sample_documents import document_path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_name_with_a_trailing_blank_keeps_its_type(cli):
    assert [extension_of(n) for n in ("trail.txt ", "trail.txt.", "Guide.PDF \t", "README ")] == [
        ".txt", ".txt", ".pdf", ""]
    assert parse_document(b"Trailing blank.", source="trail.txt ")[0].text == "Trailing blank."
    (cli.cwd / "trail.txt ").write_text("A file whose name ends in a blank.\n")
    run = cli("ingest", "trail.txt ")
    assert run.status == 0, run.err
    assert run.out.splitlines()[-1].startswith("1 added, 0 updated, 0 unchanged (skipped), 0 deleted, 0 failed")


def test_a_connection_string_with_blanks_around_its_parts_is_read():
    settings = Settings.from_env({"AzureWebJobsStorage": " AccountName = acct ; AccountKey = a2V5== ; "
                                                         "EndpointSuffix = core.windows.net ;"})
    assert settings.storage_connection == "AccountName=acct;AccountKey=a2V5==;EndpointSuffix=core.windows.net"
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"AzureWebJobsStorage": "AccountName=acct;secretkeywithoutname"})
    assert str(caught.value) == ("AzureWebJobsStorage is not a connection string: part 2 is not Key=Value (parts "
                                 "are separated by ';', e.g. AccountName=...;AccountKey=...)")


def test_service_uris_over_http_are_one_clean_line(cli, monkeypatch):
    for kind in ("blob", "queue", "table"):
        monkeypatch.setenv(f"AzureWebJobsStorage__{kind}ServiceUri", f"http://127.0.0.1:9/acct?sig=s3cr3tsig")
    assert cli("status") == (2, "", "chunking: AzureWebJobsStorage__blobServiceUri must be an https:// URL with a "
                                    "host (a token credential is sent only over HTTPS), got http://127.0.0.1/…\n")


def test_an_unreachable_document_intelligence_endpoint_is_named(cli, monkeypatch):
    port = _closed_port()
    monkeypatch.setenv("DOCUMENT_INTELLIGENCE_ENDPOINT", f"https://127.0.0.1:{port}")
    monkeypatch.setenv("DOCUMENT_INTELLIGENCE_API_KEY", "not-a-real-key-0123")
    shutil.copy(document_path("amc-manual.en.pdf"), cli.cwd / "m.pdf")
    run = cli("ingest", "m.pdf")
    assert run.status == 2, run
    last = run.err.splitlines()[-1]
    assert last.startswith(f"chunking ingest: stopped: Document Intelligence at 127.0.0.1:{port}: not reachable ("), last
    assert last.endswith("): check DOCUMENT_INTELLIGENCE_ENDPOINT and the network")
    assert "storage" not in run.err and "Azurite" not in run.err


def test_an_unreachable_search_endpoint_is_named(cli, monkeypatch):
    port = _closed_port()
    monkeypatch.setenv("AZURE_SEARCH_ENDPOINT", f"https://127.0.0.1:{port}")
    monkeypatch.setenv("AZURE_SEARCH_API_KEY", "not-a-real-key-0123")
    run = cli("search", "anything")
    assert (run.status, run.out) == (2, "")
    assert run.err.startswith(f"chunking search: Azure AI Search at 127.0.0.1:{port}: not reachable (")
    assert run.err.endswith("): check AZURE_SEARCH_ENDPOINT and the network\n")
    assert "ServiceRequestError" not in run.err


def test_the_token_limit_is_the_same_for_every_format(cli, monkeypatch):
    shutil.copy(document_path("amc-manual.en.pdf"), cli.cwd / "m.pdf")
    (cli.cwd / "n.md").write_text("# Note\nA note.\n")
    for name in ("m.pdf", "n.md"):
        run = cli("split", "--max-tokens", "8192", name)
        assert run.status == 2 and run.err.endswith(
            "chunking split: error: argument --max-tokens: must be at most 8191 (the embedding input limit, for "
            "every format), got 8192\n"), run
    assert cli("split", "--max-tokens", "8191", "n.md").status == 0
    monkeypatch.setenv("SPLIT_MAX_TOKENS", "8192")
    assert cli("ingest", "n.md") == (2, "", "chunking: SPLIT_MAX_TOKENS must be at most 8191 (the embedding input "
                                            "limit, for every format), got 8192\n")


def test_a_missing_question_set_is_one_line(cli):
    (cli.cwd / "n.md").write_text("# Note\nA note.\n")
    assert cli("eval", "--questions", "nosuch.jsonl", "n.md") == (
        2, "", "chunking eval: nosuch.jsonl: no such question set (JSON lines; --generate N drafts one)\n")


def test_ingest_and_upload_agree_on_a_folder_of_unsupported_files(cli):
    folder = cli.cwd / "odd"
    folder.mkdir()
    (folder / "a.xyz").write_text("x")
    (folder / "b.qqq").write_text("x")
    assert cli("ingest", "odd") == (
        1, "", "chunking ingest: odd: no supported file (2 files of unsupported types passed over)\n")
    assert cli("upload", "odd") == (
        1, "", "chunking upload: odd: no supported file (2 files of unsupported types passed over)\n")


def test_search_json_hits_carry_every_document_field(cli):
    (cli.cwd / "fr.txt").write_text("Le café crème coûte trois euros à l'hôtel.\n")
    assert cli("ingest", "fr.txt", "--metadata", "acl_users=bob", "--metadata", "acl_groups=staff").status == 0
    [hit] = json.loads(cli("search", "crème", "--json").out)
    assert set(DOCUMENT_FIELDS) | {"metadata", "doc_id", "version", "kind", "level", "parent_id"} <= set(hit)
    assert {k: hit[k] for k in ("storage_url", "content_type", "size_bytes", "language", "acl_users", "acl_groups",
                                "metadata", "title")} == {
        "storage_url": (cli.cwd / "fr.txt").resolve().as_uri(), "content_type": "text/plain", "size_bytes": 48,
        "language": "fr", "acl_users": ["bob"], "acl_groups": ["staff"], "metadata": {}, "title": "fr"}
    assert hit["last_modified"].endswith("Z")
