"""chunking.parsers.msg, outlook and the .msg branch of members: Outlook messages made by the tests
(tests/parsers/made.py, written as compound files) and one real message from Apache POI's test data
(tests/data/SOURCES.md), parsed to exact pages and members; damaged and hostile ones refused with their reasons."""

from __future__ import annotations

import datetime
import struct
from pathlib import Path

import pytest

from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.cfb import SIGNATURE
from chunking.parsers.limits import Deadline, Limits
from chunking.parsers.members import Member, iter_members
from chunking.parsers.outlook import codec_of, decompress_rtf
from tests.parsers.made import msg_tree, outlook_message, signed_mime_entity
from tests.parsers.test_cfb import entry_offset, fat_entry_offset, patched, start_sector

DATA = Path(__file__).resolve().parents[1] / "data"
MAY_6 = datetime.datetime(2024, 5, 6, 8, 30, tzinfo=datetime.timezone.utc)


def text_of(data: bytes, source: str = "m.msg", context: ReadContext | None = None) -> str:
    return "".join(page.text for page in parse_document(data, source=source, context=context))


def members_of(data: bytes, context: ReadContext | None = None, source: str = "m.msg") -> list[Member]:
    return list(iter_members(data, source=source, context=context or ReadContext()))


def _mail(**extra) -> bytes:
    fields = {
        "subject": "Résumé of the week", "sender": ("Ana Lima", "ana@example.com"),
        "recipients": [(1, "Ben", "ben@example.com"), (2, "Cy", "cy@example.com"), (3, "Hidden", "bcc@example.com"),
                       (1, "ops@example.com", "ops@example.com")],
        "date": MAY_6, "body": "# of crates: 4  \r\n\r\n\r\n\r\nOn Friday Ben wrote:\r\n> How many crates?\r\n",
        "attachments": [{"filename": "list.txt", "data": b"one"}, {"filename": "../list.txt", "data": b"two"},
                        {"data": b"\x89PNG", "mime": "image/png"},
                        {"name": "Old news", "message": msg_tree(subject="Old", body="Forwarded text.", embedded=True,
                                                                 attachments=[{"filename": "in.txt", "data": b"in"}])}]}
    fields.update(extra)
    return outlook_message(**fields)


PAGE = ("# Résumé of the week\n\nFrom: Ana Lima <ana@example.com>\nTo: Ben <ben@example.com>, ops@example.com\n"
        "Cc: Cy <cy@example.com>\nDate: Mon, 06 May 2024 08:30:00 +0000\n"
        "Attachments: list.txt, list (2).txt, attachment-3.png, Old news.msg\n\n"
        "\\# of crates: 4\n\nOn Friday Ben wrote:\n> How many crates?\n")


def test_the_page_is_laid_out_as_a_mails_and_the_attachments_are_members():
    data = _mail()
    assert text_of(data) == PAGE  # Bcc dropped; the quoted reply kept with its marks; only the subject a heading
    members = members_of(data)
    assert [(m.name, m.data[:8], m.reason) for m in members] == [
        ("attachments/list.txt", b"one", ""), ("attachments/list (2).txt", b"two", ""),
        ("attachments/attachment-3.png", b"\x89PNG", ""), ("attachments/Old news.msg", SIGNATURE, "")]
    # The attached message is a .msg of its own, with its own attachment: a container one level deeper.
    inner = members[3].data
    assert text_of(inner, "m.msg/attachments/Old news.msg") == "# Old\n\nAttachments: in.txt\n\nForwarded text.\n"
    assert members_of(inner, source="m.msg/attachments/Old news.msg") == [Member("attachments/in.txt", b"in")]


def test_eight_bit_strings_are_read_in_the_messages_code_page_as_unicode_ones_are_read():
    cyrillic = {"subject": "Отчёт", "sender": ("Иван", "ivan@example.com"), "body": "Привет, мир."}
    unicode = text_of(outlook_message(**cyrillic))
    assert unicode == "# Отчёт\n\nFrom: Иван <ivan@example.com>\n\nПривет, мир.\n"
    assert text_of(outlook_message(**cyrillic, unicode=False, code_page=1251)) == unicode
    # Without a message code page: the internet code page when the bytes fit it (UTF-8 does not fit cp1252 text),
    # else Windows-1252.
    latin = {"subject": "Café", "body": "Crème brûlée.", "unicode": False}
    assert text_of(outlook_message(**latin, internet_code_page=65001)) == "# Café\n\nCrème brûlée.\n"
    assert text_of(outlook_message(**latin)) == "# Café\n\nCrème brûlée.\n"
    assert [codec_of(n) for n in (1252, 65001, 28595, 50220, 0, 99999)] == [
        "cp1252", "utf-8", "iso8859-5", "iso2022_jp", None, None]


def test_without_a_plain_body_the_html_body_is_rendered_and_without_either_the_rtf_body_is_read():
    html = "<html><body><h2>Agenda</h2><p>Budget in €</p><blockquote>Earlier words</blockquote></body></html>"
    binary = outlook_message(subject="Hi", html=html.encode("cp1252"), internet_code_page=1252)
    # The HTML parser renders a quote as its text, as it does for a .eml mail's HTML body.
    assert text_of(binary) == "# Hi\n\n## Agenda\n\nBudget in €\n\nEarlier words\n"
    assert text_of(outlook_message(subject="Hi", html=html)) == text_of(binary)  # PidTagHtml as a string
    # An empty plain body does not hide the HTML one.
    assert text_of(outlook_message(subject="Hi", body="", html=html)) == text_of(binary)
    rtf = rb"{\rtf1\ansi{\fonttbl{\f0 Arial;}}\pard The marmot slept.\par}"
    uncompressed = struct.pack("<IIII", len(rtf) + 12, len(rtf), 0x414C454D, 0) + rtf  # "MELA" ([MS-OXRTFCP])
    assert text_of(outlook_message(subject="Hi", rtf=uncompressed)) == "# Hi\n\nThe marmot slept.\n"
    context = ReadContext()
    assert text_of(outlook_message(subject="Hi", rtf=b"\0" * 20), context=context) == "# Hi\n"
    assert context.notes == ["RTF body not read: not compressed RTF (neither LZFu nor MELA)"]


def test_compressed_rtf_is_decompressed_as_the_specification_example_says():
    # [MS-OXRTFCP] §3.1.4.1.2, the compressed example and the RTF it decompresses to.
    data = bytes.fromhex("2d0000002b0000004c5a4675f1c5c7a703000a00726370673132354232"
                         "0af32068656c090020627705b06c647d0a800fa0")
    assert decompress_rtf(data, max_bytes=1000) == b"{\\rtf1\\ansi\\ansicpg1252\\pard hello world}\r\n"
    with pytest.raises(ValueError, match="expands past its budget"):
        decompress_rtf(data, max_bytes=10)


def test_without_recipient_storages_the_display_lists_name_the_recipients():
    data = outlook_message(subject="Plain", display_to="Ben; Cy ;", body="x")
    assert text_of(data) == "# Plain\n\nTo: Ben, Cy\n\nx\n"
    assert text_of(outlook_message(body="No subject.")) == "# (no subject)\n\nNo subject.\n"


def test_a_real_message_from_apache_poi():
    # quick.msg of Apache POI's test data (Apache-2.0; tests/data/SOURCES.md): 8-bit strings (code page 1252), an
    # Exchange sender (no SMTP address: the name alone), a plain body.
    data = (DATA / "quick.msg").read_bytes()
    assert text_of(data, "quick.msg") == (
        "# Test the content transformer\n\nFrom: Kevin Roast\nTo: Kevin Roast <kevin.roast@alfresco.org>\n"
        "Date: Thu, 14 Jun 2007 09:42:53 +0000\n\nThe quick brown fox jumps over the lazy dog\n")
    assert members_of(data, source="quick.msg") == []


def directory_sector(data: bytes) -> int:
    return struct.unpack_from("<I", data, 48)[0]


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda d: b"PK\x03\x04" + d[4:], "not a valid MSG: not an OLE compound file"),
    (lambda d: d[:30] + struct.pack("<H", 7) + d[32:],
     "not a valid MSG: damaged compound file: incorrect sector_size in OLE header"),
    (lambda d: patched(d, fat_entry_offset(d, directory_sector(d)), directory_sector(d)),
     "not a valid MSG: damaged compound file: the sector chain of the directory loops (FAT cycle)"),
    (lambda d: patched(d, entry_offset(d, "__properties_version1.0", 1) + 116, 0xFFFF),
     "not a valid MSG: damaged compound file: __properties_version1.0 points past the end of the file"),
])
def test_a_damaged_compound_file_is_refused_with_its_reason_naming_the_file(damage, reason):
    data = damage(outlook_message(subject="S", body="B", attachments=[{"filename": "a.txt", "data": b"A"}]))
    with pytest.raises(ParseError) as page_error:
        parse_document(data, source="in/m.msg")
    assert str(page_error.value) == f"in/m.msg: {reason}"
    with pytest.raises(ParseError) as members_error:
        members_of(data, source="in/m.msg")
    assert str(members_error.value) == f"in/m.msg: {reason}"


def test_a_compound_file_that_is_no_message_is_refused():
    from chunking.parsers.cfb import write_compound

    with pytest.raises(ParseError, match=r"^a.msg: not a valid MSG: no message properties "
                                         r"\(__properties_version1.0\)$"):
        parse_document(write_compound({"WordDocument": b"x"}), source="a.msg")


def test_hostile_attachments_are_refused_one_by_one_the_others_read():
    big = b"L" * 6000
    data = outlook_message(subject="S", body="B", attachments=[
        {"filename": "loop.txt", "data": big}, {"filename": "ok.txt", "data": b"fine"},
        {"filename": "huge.txt", "data": b"H" * 9000}, {"filename": "chart.bin", "method": 6},
        {"filename": "link.pdf", "method": 4}, {"filename": "last.txt", "data": b"last"}])
    start = start_sector(data, "__substg1.0_37010102")  # loop.txt's data, the first of that name
    data = patched(data, fat_entry_offset(data, start + 3), start)  # its fourth sector points back to its first
    context = ReadContext(Limits(max_decompressed_bytes=8000))
    assert members_of(data, context) == [
        Member("attachments/loop.txt", reason="damaged attachment: damaged compound file: the sector chain of "
                                              "__attach_version1.0_#00000000/__substg1.0_37010102 loops (FAT cycle)"),
        Member("attachments/ok.txt", b"fine"),
        Member("attachments/huge.txt", reason="the mail's attachments up to this one add up past 8000 bytes "
                                              "(MAX_DECOMPRESSED_BYTES)"),
        Member("attachments/chart.bin", reason="an embedded OLE object (attach method 6), not read"),
        Member("attachments/link.pdf", reason="a link to a file outside the mail (attach method 4), not read"),
        Member("attachments/last.txt", b"last"),
    ]
    # The page is read all the same: it lists every attachment.
    assert text_of(data) == ("# S\n\nAttachments: loop.txt, ok.txt, huge.txt, chart.bin, link.pdf, last.txt\n\n"
                             "B\n")


def test_the_attachments_share_one_budget_and_past_the_count_are_not_read():
    data = outlook_message(subject="S", attachments=[{"filename": f"{i}.txt", "data": b"x" * 3000}
                                                     for i in range(5)])
    context = ReadContext(Limits(max_decompressed_bytes=7000, max_archive_members=4))
    past = "the mail's attachments up to this one add up past 7000 bytes (MAX_DECOMPRESSED_BYTES)"
    assert [(m.name, len(m.data), m.reason) for m in members_of(data, context)] == [
        ("attachments/0.txt", 3000, ""), ("attachments/1.txt", 3000, ""), ("attachments/2.txt", 0, past),
        ("attachments/3.txt", 0, past)]
    assert context.notes == ["1 attachments not read: past the first 4 members of its container (MAX_ARCHIVE_MEMBERS)"]
    late = ReadContext(deadline=Deadline(0, started=0.0))
    assert members_of(data, late)[0] == Member("attachments/0.txt",
                                               reason="stage 1 took longer than 300 s (STAGE1_MAX_SECONDS)")


def test_an_attached_message_counts_all_its_streams_against_the_budget():
    inner = msg_tree(subject="Inner", body="i" * 5000, embedded=True)
    data = outlook_message(subject="S", attachments=[{"name": "Fwd", "message": inner}])
    assert members_of(data, ReadContext(Limits(max_decompressed_bytes=4000))) == [
        Member("attachments/Fwd.msg", reason="the mail's attachments up to this one add up past 4000 bytes "
                                             "(MAX_DECOMPRESSED_BYTES)")]
    [member] = members_of(data)
    assert text_of(member.data) == "# Inner\n\n" + "i" * 5000 + "\n"


def test_storages_nested_past_the_bound_refuse_the_attached_message_not_the_mail():
    nested: dict = {"__properties_version1.0": b"\0" * 24}
    for _ in range(101):
        nested = {"deeper": nested}
    data = outlook_message(subject="S", attachments=[{"name": "Deep", "message": nested},
                                                     {"filename": "ok.txt", "data": b"ok"}])
    assert members_of(data) == [
        Member("attachments/Deep.msg", reason="damaged attachment: damaged compound file: storages nested more than "
                                              "100 deep"),
        Member("attachments/ok.txt", b"ok")]


def test_the_sender_and_date_fall_back_as_the_specification_orders_them():
    from chunking.parsers.cfb import write_compound

    def utf16(text: str) -> bytes:
        return (text + "\0").encode("utf-16-le")

    tree = msg_tree(subject="Fallbacks", body="x")
    # No PidTagSenderName/SmtpAddress: the sent-representing name with its SMTP-typed address (0x0042, 0x0064,
    # 0x0065); no submit time: the delivery time (0x0E06), a FILETIME.
    tree["__substg1.0_0042001F"] = utf16("Desk")
    tree["__substg1.0_0064001F"] = utf16("SMTP")
    tree["__substg1.0_0065001F"] = utf16("desk@example.com")
    ticks = int((MAY_6 - datetime.datetime(1601, 1, 1, tzinfo=datetime.timezone.utc)).total_seconds() * 10**7)
    tree["__properties_version1.0"] += struct.pack("<IIQ", (0x0E06 << 16) | 0x0040, 2, ticks)
    assert text_of(write_compound(tree)) == ("# Fallbacks\n\nFrom: Desk <desk@example.com>\n"
                                             "Date: Mon, 06 May 2024 08:30:00 +0000\n\nx\n")
    # An Exchange address (type EX, an X.500 name) is no mail address: the name alone.
    tree = msg_tree(subject="Exchange", body="x")
    tree["__substg1.0_0C1A001F"] = utf16("Kevin")
    tree["__substg1.0_0C1E001F"] = utf16("EX")
    tree["__substg1.0_0C1F001F"] = utf16("/O=EXAMPLE/OU=FIRST/CN=RECIPIENTS/CN=KEVIN")
    assert text_of(write_compound(tree)) == "# Exchange\n\nFrom: Kevin\n\nx\n"


def test_a_clear_signed_message_has_the_body_and_attachments_of_its_signed_content():
    # Before, the page said 'Attachments: smime.p7m' with no body, and smime.p7m was the one member (failed:
    # unsupported file type .p7m), so plan.txt was never read.
    data = outlook_message(subject="Signed plan", sender=("Alex", "alex@example.com"),
                           message_class="IPM.Note.SMIME.MultipartSigned",
                           attachments=[{"filename": "smime.p7m", "mime": "multipart/signed",
                                         "data": signed_mime_entity()}])
    assert text_of(data) == ("# Signed plan\n\nFrom: Alex <alex@example.com>\nAttachments: plan.txt\n\n"
                             "The plan is attached.\n")
    assert members_of(data) == [Member("attachments/plan.txt", b"Pallets of pumice.")]


def test_a_signed_messages_own_body_stays_when_its_signed_content_has_none_and_other_classes_are_unchanged():
    from email.mime.application import MIMEApplication
    from email.mime.multipart import MIMEMultipart

    files = MIMEMultipart("mixed")  # the signed content: a file, no text part
    files.attach(MIMEApplication(b"Pallets of pumice.", Name="plan.txt"))
    files.get_payload()[0].add_header("Content-Disposition", "attachment", filename="plan.txt")
    only_files = MIMEMultipart("signed", protocol="application/pkcs7-signature")
    only_files.attach(files)
    only_files.attach(MIMEApplication(b"0\x82sig", "pkcs7-signature", Name="smime.p7s"))
    data = outlook_message(subject="S", body="Outlook's copy of the body.",
                           message_class="ipm.note.smime.multipartsigned",
                           attachments=[{"filename": "smime.p7m", "data": only_files.as_bytes()}])
    assert text_of(data) == "# S\n\nAttachments: plan.txt\n\nOutlook's copy of the body.\n"
    # An opaque-signed or encrypted message (IPM.Note.SMIME) holds CMS data, not MIME: one attachment as before;
    # so does a clear-signed one whose attachment holds no multipart/signed entity.
    for message_class, attached in (("IPM.Note.SMIME", b"0\x82\x05\x00CMS"), ("IPM.Note.SMIME.MultipartSigned",
                                                                             b"just bytes")):
        data = outlook_message(subject="S", body="B.", message_class=message_class,
                               attachments=[{"filename": "smime.p7m", "data": attached}])
        assert text_of(data) == "# S\n\nAttachments: smime.p7m\n\nB.\n"
        assert members_of(data) == [Member("attachments/smime.p7m", attached)]
