"""chunking.parsers.members, eml and archive: a container's members handed out one at a time or refused with their
reason; a mail's page and an archive's page."""

from __future__ import annotations

import io
import warnings
import zipfile
from email.message import EmailMessage

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.formats import member_root
from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Deadline, Limits
from chunking.parsers.members import Member, iter_members, unsafe_name
from tests.parsers.made import flag_encrypted


def _zip(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as package, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a duplicate name is what some tests want
        for name, data in members:
            package.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return buffer.getvalue()


@pytest.mark.parametrize(("name", "unsafe"), [
    ("a/b.txt", False), ("a/..b.txt", False), ("../b.txt", True), ("a/../../b.txt", True), ("/etc/passwd", True),
    ("\\windows\\x.txt", True), ("C:x.txt", True), ("a\\..\\b.txt", True), ("a\x00.txt", True), ("", True),
])
def test_unsafe_names(name, unsafe):
    assert unsafe_name(name) is unsafe


def test_zip_members_in_order_with_their_refusals():
    data = _zip([("a.txt", b"Alpha."), ("dir/", b""), ("../up.txt", b"Up."), ("a.txt", b"Again."),
                 ("big.txt", b"x" * 3_000_000), ("locked.txt", b"Secret."), ("tool.exe", b"MZ"), ("README", b"r")])
    data = flag_encrypted(data, "locked.txt")
    members = list(iter_members(data, source="box.zip",
                                context=ReadContext(Limits(max_decompressed_bytes=2 * 1024 * 1024))))
    assert members == [
        Member("a.txt", b"Alpha."),
        Member("up.txt", reason="unsafe member name '../up.txt' (absolute, or a .. segment)"),
        Member("a.txt", reason="a member of the same name comes before it in the archive"),
        Member("big.txt", reason="expands past 2 MB when decompressed (MAX_DECOMPRESSED_BYTES)"),
        Member("locked.txt", reason="encrypted member (password-protected)"),
        Member("tool.exe", reason="unsupported file type .exe"),
        Member("README", reason="unsupported file type (no extension)"),
    ]


def test_members_past_the_count_are_not_read_and_a_note_says_so():
    context = ReadContext(Limits(max_archive_members=2))
    members = list(iter_members(_zip([(f"{i}.txt", b"x") for i in range(5)]), source="b.zip", context=context))
    assert [m.name for m in members] == ["0.txt", "1.txt"]
    assert context.notes == ["3 members not read: past the first 2 members of its container (MAX_ARCHIVE_MEMBERS)"]


def test_members_past_the_deadline_are_refused():
    context = ReadContext(deadline=Deadline(0, started=0.0))
    members = list(iter_members(_zip([("a.txt", b"x")]), source="b.zip", context=context))
    assert members == [Member("a.txt", reason="stage 1 took longer than 300 s (STAGE1_MAX_SECONDS)")]


def test_an_archive_that_is_not_a_zip_is_refused_and_its_page_lists_its_files():
    with pytest.raises(ParseError, match=r"^b.zip: not a valid ZIP: File is not a zip file$"):
        parse_document(b"not a zip", source="b.zip")
    pages = parse_document(_zip([("docs/a.pdf", b"%PDF"), ("../x.txt", b"x")]), source="b.zip")
    assert [p.text for p in pages] == ["Files in the archive:\n\n- docs/a.pdf\n- x.txt (refused)\n"]


def _mail() -> bytes:
    message = EmailMessage()
    message["Subject"] = "=?utf-8?q?R=C3=A9sum=C3=A9?= of the week"
    message["From"], message["To"], message["Cc"] = "Ana <ana@example.com>", "a@example.com", "b@example.com"
    message["Date"] = "Mon, 06 May 2024 08:30:00 +0000"
    message.set_content("# of crates: 4\n\nOn Friday Ben wrote:\n> How many crates?\n")
    message.add_alternative("<p>HTML copy</p>", subtype="html")
    message.add_attachment(b"one", maintype="text", subtype="plain", filename="../../list.txt")
    message.add_attachment(b"two", maintype="text", subtype="plain", filename="list.txt")
    message.add_attachment(b"\x89PNG", maintype="image", subtype="png")
    forwarded = EmailMessage()
    forwarded["Subject"] = "Old"
    forwarded.set_content("Forwarded text.\n")
    message.add_attachment(forwarded)
    return message.as_bytes()


def test_a_mail_page_has_its_headers_and_plain_body_and_its_attachments_are_members():
    data = _mail()
    assert [p.text for p in parse_document(data, source="m.eml")] == [
        "# Résumé of the week\n\nFrom: Ana <ana@example.com>\nTo: a@example.com\nCc: b@example.com\n"
        "Date: Mon, 06 May 2024 08:30:00 +0000\nAttachments: list.txt, list (2).txt, attachment-3.png, "
        "attachment-4.eml\n\n\\# of crates: 4\n\nOn Friday Ben wrote:\n> How many crates?\n"]
    members = list(iter_members(data, source="m.eml", context=ReadContext()))
    assert [(m.name, m.data[:7], m.reason) for m in members] == [
        ("attachments/list.txt", b"one", ""), ("attachments/list (2).txt", b"two", ""),
        ("attachments/attachment-3.png", b"\x89PNG", ""), ("attachments/attachment-4.eml", b"Subject", "")]


def test_an_html_only_mail_is_rendered_and_bytes_without_headers_are_refused():
    message = EmailMessage()
    message["Subject"] = "Hi"
    message.set_content("<h2>Agenda</h2><p>Budget</p>", subtype="html")
    assert [p.text for p in parse_document(message.as_bytes(), source="m.eml")] == [
        "# Hi\n\n## Agenda\n\nBudget\n"]
    with pytest.raises(ParseError, match="not a mail: no header lines"):
        parse_document(b"\n\njust text", source="m.eml")


_NAME_PARTS = st.sampled_from(["a", "b.txt", "..", ".", "", "C:", "x\\..\\y.md", "é.txt", "\x00", "dir"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_NAME_PARTS, min_size=1, max_size=4).map("/".join), min_size=1, max_size=8))
def test_any_names_give_members_below_the_archive_and_unique(names):
    # Whatever the names: a member that is read has a safe name, no two members read share a name, every
    # member (read or refused) stays below the archive, and each name is handed out exactly once, in order.
    data = _zip([(name, b"text") for name in names])
    with zipfile.ZipFile(io.BytesIO(data)) as package:  # zipfile cuts a name at a NUL, so "a/\x00" is a folder
        files = [info.filename for info in package.infolist() if not info.filename.endswith("/")]
    members = list(iter_members(data, source="box.zip", context=ReadContext()))
    read = [m.name for m in members if not m.reason]
    assert all(not unsafe_name(name) for name in read)
    assert len(read) == len(set(read))
    assert all(member_root(f"box.zip/{m.name}") == "box.zip" and ".." not in m.name.split("/") for m in members)
    assert len(members) == len(files)
