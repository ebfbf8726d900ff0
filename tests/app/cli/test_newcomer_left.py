"""What a newcomer trying the CLI met next: ``upload --metadata`` checked as ``ingest --metadata`` is, a dangling
symbolic link in a folder named as a failed file, ``status --watch`` ending with the exit status ``status`` gives."""

from __future__ import annotations

import pytest

#: (--metadata item, the reason after "chunking COMMAND: "), with METADATA_FIELDS=category and the access lists
#: read from metadata.
REFUSED = [
    ("acl_user=alice", "--metadata acl_user=alice: no index field or access list is read from this name (names read: "
                       "category, acl_users, acl_groups); add it to METADATA_FIELDS to make it an index field"),
    ("dept-name=HR", "--metadata dept-name=HR: a metadata name is ASCII letters, digits and underscores, not "
                     "starting with a digit"),
    ("category=", "--metadata category=: no value"),
    ("acl_users=, ;", "--metadata acl_users=, ;: an access list needs at least one id"),
    ("category=Café", "--metadata category=Café: a metadata value is printable ASCII (blob metadata travels as HTTP "
                      "headers), without accents or control characters"),
    ("category=a\tb", "--metadata category=a\\tb: a metadata value is printable ASCII (blob metadata travels as "
                      "HTTP headers), without accents or control characters"),
]


@pytest.mark.parametrize(("item", "reason"), REFUSED)
@pytest.mark.parametrize("command", ["ingest", "upload"])
def test_ingest_and_upload_refuse_the_same_metadata_items_before_anything_is_done(cli, monkeypatch, command, item,
                                                                                  reason):
    monkeypatch.setenv("METADATA_FIELDS", "category")
    monkeypatch.delenv("ACL_SOURCE", raising=False)
    (cli.cwd / "pay.md").write_text("# Pay\n\nSalaries are paid on the 25th.\n")
    # Without storage settings an upload would say the storage is not reachable: the item is refused before.
    assert cli(command, "pay.md", "--metadata", "acl_groups=hr", "--metadata", item) == (
        2, "", f"chunking {command}: {reason}\n")
    assert sorted(p.name for p in cli.cwd.iterdir()) == ["pay.md"]  # nothing read, nothing written


@pytest.mark.parametrize("command", ["ingest", "upload"])
def test_a_metadata_name_given_twice_is_refused_whatever_its_case(cli, monkeypatch, command):
    monkeypatch.delenv("ACL_SOURCE", raising=False)
    (cli.cwd / "pay.md").write_text("# Pay\n")
    assert cli(command, "pay.md", "--metadata", "acl_users=alice", "--metadata", "ACL_Users=bob") == (
        2, "", f"chunking {command}: --metadata ACL_Users=bob: ACL_Users is given twice (metadata names are "
               "compared without regard to case)\n")
