from chunking.documents.records import build_records
from chunking.model import Chunk, Page
from chunking.splitters.markdown import HeadingOutline


def test_outline_paths_and_fences():
    text = "# Install\nintro\n## Linux\n```sh\n# not a heading\n```\nsteps\n## macOS\nbrew\n# Usage\nrun\n"
    outline = HeadingOutline([Page(0, 0, text)])
    assert outline.path_at(0) == ("Install",)
    assert outline.path_at(text.index("steps")) == ("Install", "Linux")
    assert outline.path_at(text.index("# not")) == ("Install", "Linux")
    assert outline.path_at(text.index("brew")) == ("Install", "macOS")
    assert outline.path_at(text.index("run")) == ("Usage",)
    assert HeadingOutline([Page(0, 0, "no headings")]).path_at(3) == ()


def test_outline_across_pages_uses_document_offsets():
    outline = HeadingOutline([Page(0, 0, "aaaa\n"), Page(1, 5, "# Second\ntext")])
    assert outline.path_at(4) == ()
    assert outline.path_at(7) == ("Second",)


def test_outline_skips_front_matter_at_the_document_start_only():
    text = "---\ntitle: Meta\n---\n\n# Intro\nbody\n"
    outline = HeadingOutline([Page(0, 0, text)])
    assert outline.path_at(text.index("---\n\n")) == ()  # the closing --- underlines no "title: Meta" heading
    assert outline.path_at(text.index("body")) == ("Intro",)
    # A later page starting with --- is no front matter: "Meta" there is a setext heading.
    later = HeadingOutline([Page(0, 0, "aaaa\n"), Page(1, 5, "---\nMeta\n---\ntext")])
    assert later.path_at(20) == ("Meta",)


def test_split_markdown_emits_no_chunk_for_front_matter():
    from chunking.documents.splitter import split_markdown

    text = "---\ntitle: My Front Matter Title\n---\n\n# Intro\nFirst words.\n\n## Next\nMore words.\n"
    chunks = split_markdown([Page(0, 0, text)], max_tokens=200, max_chars=2000)
    assert [(c.text, c.char_start, c.char_end, c.headings) for c in chunks] == [
        ("# Intro\nFirst words.", 38, 58, ("Intro",)),
        ("## Next\nMore words.", 60, 79, ("Intro", "Next")),
    ]
    assert text[38:58] == "# Intro\nFirst words."


def test_build_records_fields():
    chunks = [Chunk("Hello world.", 0, 12, 0, 0, 3), Chunk("Next page text.", 13, 28, 1, 2, 4)]
    records = build_records(chunks, doc_id="dabc", version="0123456789abcdef", source="a/b.pdf", paginated=True)
    assert [r.id for r in records] == ["dabc-01234567-000000", "dabc-01234567-000001"]
    assert [r.sourcepage for r in records] == ["a/b.pdf#page=1", "a/b.pdf#page=2"]
    assert (records[1].page_start, records[1].page_end, records[1].char_start, records[1].char_end) == (1, 2, 13, 28)
    assert records[0].content_hash == records[0].content_hash and len(records[0].content_hash) == 64
    plain = build_records(chunks, doc_id="dabc", version="v", source="a/b.md", paginated=False,
                          outline=HeadingOutline([Page(0, 0, "# T\n" + "x" * 30)]))
    assert plain[0].sourcepage == "a/b.md" and plain[1].headings == ("T",)


def test_outline_follows_commonmark_headings():
    text = "# Languages ##\n#tag is not a heading\n## C#\nbody\n  ~~~\n## inside a tilde fence\n  ~~~\n## After\n"
    outline = HeadingOutline([Page(0, 0, text)])
    assert outline.path_at(text.index("#tag")) == ("Languages",)
    assert outline.path_at(text.index("body")) == ("Languages", "C#")
    assert outline.path_at(text.index("## inside")) == ("Languages", "C#")
    assert outline.path_at(text.index("## After")) == ("Languages", "After")


def test_outline_has_setext_and_bom_prefixed_headings():
    text = "\ufeff# Guide\nintro\n\nInstall\n-------\nsteps\n\n---\nafter a rule\n\nUsage\n=====\nrun it"
    outline = HeadingOutline([Page(0, 0, text)])
    assert outline.path_at(text.index("intro")) == ("Guide",)
    assert outline.path_at(text.index("Install")) == ("Guide", "Install")
    assert outline.path_at(text.index("after a rule")) == ("Guide", "Install")  # "---" after a blank line is a rule
    assert outline.path_at(text.index("run it")) == ("Usage",)
