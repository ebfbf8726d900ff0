"""chunking.parsers.docx.parts: text boxes, footnotes, endnotes, headers and footers of documents built with
python-docx (text boxes and notes added as the XML Word writes)."""

from __future__ import annotations

import io

import docx
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml

from chunking.parsers import ReadContext, parse_document
from chunking.parsers.docx.parts import prepare_body
from chunking.parsers.limits import Limits

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_NAMESPACES = (
    f'xmlns:w="{_W}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
)


def _text_box_run(*paragraphs: str, inner: str = "") -> str:
    """A run holding a text box as Word writes it: DrawingML in mc:Choice, the same text as VML in mc:Fallback."""
    content = "".join(f"<w:p><w:r><w:t>{text}</w:t></w:r>{inner if i == 0 else ''}</w:p>"
                      for i, text in enumerate(paragraphs))
    fallback = "".join(f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>" for text in paragraphs)
    return (f"<w:r {_NAMESPACES}><mc:AlternateContent><mc:Choice Requires=\"wps\"><w:drawing><wp:anchor>"
            "<a:graphic><a:graphicData><wps:wsp><wps:txbx>"
            f"<w:txbxContent>{content}</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic>"
            "</wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>"
            f"<w:txbxContent>{fallback}</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback>"
            "</mc:AlternateContent></w:r>")


def _notes_part(document, kind: str, notes: dict[int, str]) -> None:
    separators = (f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
                  f'<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/>'
                  f"</w:r></w:p></w:{kind}>")
    body = "".join(f'<w:{kind} w:id="{i}"><w:p><w:r><w:{kind}Ref/></w:r><w:r><w:t xml:space="preserve"> '
                   f"{text}</w:t></w:r></w:p></w:{kind}>" for i, text in notes.items())
    blob = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:{kind}s xmlns:w="{_W}">{separators}{body}'
            f"</w:{kind}s>")
    content_type = CT.WML_FOOTNOTES if kind == "footnote" else CT.WML_ENDNOTES
    part = Part(PackURI(f"/word/{kind}s.xml"), content_type, blob.encode(), document.part.package)
    document.part.relate_to(part, RT.FOOTNOTES if kind == "footnote" else RT.ENDNOTES)


def _reference(paragraph, kind: str, note_id: int) -> None:
    paragraph._p.append(parse_xml(f'<w:r xmlns:w="{_W}"><w:{kind}Reference w:id="{note_id}"/></w:r>'))


def _text(document) -> str:
    buffer = io.BytesIO()
    document.save(buffer)
    [page] = parse_document(buffer.getvalue(), source="built.docx")
    return page.text


def test_a_text_box_is_read_once_after_its_anchor_paragraph():
    document = docx.Document()
    anchor = document.add_paragraph("Before the box.")
    anchor._p.append(parse_xml(_text_box_run("Boxed one.", "Boxed two.")))
    document.add_paragraph("After the box.")

    assert _text(document) == "Before the box.\n\nBoxed one.\n\nBoxed two.\n\nAfter the box."


def test_a_text_box_in_a_text_box_follows_its_container():
    document = docx.Document()
    anchor = document.add_paragraph("Anchor.")
    anchor._p.append(parse_xml(_text_box_run("Outer.", inner=_text_box_run("Inner."))))

    assert _text(document) == "Anchor.\n\nOuter.\n\nInner."


def test_text_boxes_nested_past_the_limit_are_left_out_and_noted():
    document = docx.Document()
    anchor = document.add_paragraph("Anchor.")
    anchor._p.append(parse_xml(_text_box_run("Outer.", inner=_text_box_run("Inner."))))
    context = ReadContext(limits=Limits(max_nesting_depth=1))

    blocks = prepare_body(document, document.element.body, context)

    assert blocks == []
    assert context.notes == ["text boxes nested more than 1 levels deep left out"]


def test_footnotes_and_endnotes_are_kept_as_marks_and_closing_blocks():
    document = docx.Document()
    _notes_part(document, "footnote", {1: "Unused note.", 2: "First cited.", 3: "Second cited."})
    _notes_part(document, "endnote", {1: "An endnote."})
    first = document.add_paragraph("Revenue grew")
    _reference(first, "footnote", 2)
    first.add_run(" and costs fell")
    _reference(first, "footnote", 3)
    second = document.add_paragraph("Again")
    _reference(second, "footnote", 2)
    _reference(second, "endnote", 1)
    _reference(second, "footnote", 99)  # points to no note: dropped

    assert _text(document) == (
        "Revenue grew[^1] and costs fell[^2]\n\nAgain[^1][^3]\n\n"
        "[^1]: First cited.\n\n[^2]: Second cited.\n\n[^3]: An endnote."
    )


def test_headers_and_footers_are_left_out():
    document = docx.Document()
    section = document.sections[0]
    section.header.paragraphs[0].text = "ACME confidential"
    section.footer.paragraphs[0].text = "Page footer text"
    document.add_paragraph("Body only.")

    assert _text(document) == "Body only."


def test_a_picture_with_alt_text_is_a_figure_after_its_paragraph(tmp_path):
    from PIL import Image

    image = tmp_path / "chart.png"
    Image.new("RGB", (4, 4), "blue").save(image)
    document = docx.Document()
    document.add_paragraph("Sales by quarter:")
    document.add_picture(str(image))
    described = document.paragraphs[-1]._p.xpath(".//wp:docPr")[0]
    described.set("descr", "Bar chart: sales rose from 10 to 14 <millions>")
    document.add_picture(str(image))  # no description (or only the file name): nothing to read
    document.paragraphs[-1]._p.xpath(".//wp:docPr")[0].set("descr", "chart.png")
    document.add_paragraph("End.")

    assert _text(document) == ("Sales by quarter:\n\n<figure>Bar chart: sales rose from 10 to 14 &lt;millions&gt;"
                               "</figure>\n\nEnd.")
