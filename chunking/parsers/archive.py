"""ZIP archives (.zip): the archive's own page is the list of its files; each file is a document of its own,
handed out by ``chunking.parsers.members`` and parsed by its own format's parser (docs/architecture.md#containers).

The page lists the members' names as ``- name`` lines, in the order of the central directory, folders left out, so
that a search for a file name finds the archive; a name that is unsafe (``chunking.parsers.members.unsafe_name``)
is listed without its ``..`` segments and marked ``(refused)``. At most ``MAX_ARCHIVE_MEMBERS`` names are listed,
then a line saying how many more there are.
"""

from __future__ import annotations

from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, pages_from_texts
from chunking.parsers.members import open_archive, unsafe_name

__all__ = ["parse"]


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """The archive's page: ``Files in the archive:`` and one ``- name`` line per member.

    Raises:
        ParseError: ``not a valid ZIP: …``; ``page 1 has more than … characters (MAX_PAGE_CHARS)``.
    """
    context = context if context is not None else ReadContext()
    limits = context.limits
    with open_archive(data, source=source) as package:
        names = [info.filename for info in package.infolist() if not info.filename.endswith("/")]  # not folders
    lines = []
    for name in names[: limits.max_archive_members]:
        shown = " ".join(name.replace("\\", "/").split())
        lines.append(f"- {'/'.join(p for p in shown.split('/') if p not in ('', '..'))} (refused)"
                     if unsafe_name(name) else f"- {shown}")
    if len(names) > limits.max_archive_members:
        lines.append(f"- … and {len(names) - limits.max_archive_members} more")
    text = "Files in the archive:\n\n" + "\n".join(lines) + "\n" if lines else ""
    if len(text) > limits.max_page_chars:
        raise ParseError(source, limits.page_chars_reason(0))
    return pages_from_texts([text])
