"""Access lists from ADLS Gen2 path ACLs (``ACL_SOURCE=adls``): who may read a file, as the index's
``acl_users`` and ``acl_groups``.

An ACL is the POSIX-style list the Data Lake "Path - Get Properties" call returns (``action=getAccessControl``:
``x-ms-owner``, ``x-ms-group``, ``x-ms-acl``), e.g. ``user::rw-,user:<oid>:r--,group::r--,group:<oid>:r-x,
mask::r--,other::---`` ("Access control lists in Azure Data Lake Storage" on learn.microsoft.com). A principal may
read when its entry has ``r``; for named users, named groups and the owning group the mask must allow ``r`` too
(it bounds them, not the owner or ``other``). ``other`` with ``r`` means everyone: the group ``EVERYONE``. Default
entries (``default:…``) apply to new children, not to this file, and are ignored; so are the owner and the owning
group when they are ``$superuser``. Only the file's own ACL is read: the execute permission a reader also needs on
every parent folder is not checked.
"""

from __future__ import annotations

from typing import Any

from chunking.model import EVERYONE
from chunking.storage import storage_error

__all__ = ["acl_principals", "path_access_lists"]


def acl_principals(acl: str, owner: str = "", group: str = "") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(users, groups)`` that may read a path with POSIX ACL *acl*, owner *owner* and owning group *group*
    (module docstring for the rules), each sorted without duplicates.

    Example: ``acl_principals("user::rw-,user:u1:r--,group::---,group:g1:r--,mask::r--,other::---", "o1", "g0")``
    → ``(("o1", "u1"), ("g1",))``.

    Raises:
        ValueError: an entry is not ``[default:]type:[id]:perms`` with a three-letter permission.
    """
    entries = []
    for raw in filter(None, (e.strip() for e in acl.split(","))):
        parts = raw.split(":")
        if parts[0] == "default":
            continue
        if len(parts) != 3 or len(parts[2]) != 3 or parts[0] not in ("user", "group", "mask", "other"):
            raise ValueError(f"not an ACL entry: {raw!r}")
        entries.append((parts[0], parts[1], parts[2]))
    masks = [perms for kind, _, perms in entries if kind == "mask"]
    masked_read = not masks or masks[-1][0] == "r"
    users: set[str] = set()
    groups: set[str] = set()
    for kind, who, perms in entries:
        if perms[0] != "r":
            continue
        if kind == "user" and not who:
            if owner and owner != "$superuser":
                users.add(owner)
        elif kind == "user" and masked_read:
            users.add(who)
        elif kind == "group" and masked_read:
            name = who or (group if group != "$superuser" else "")
            if name:
                groups.add(name)
        elif kind == "other":
            groups.add(EVERYONE)
    return tuple(sorted(users)), tuple(sorted(groups))


def path_access_lists(file_client: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(users, groups)`` that may read the file of *file_client* (an ``azure.storage.filedatalake``
    ``DataLakeFileClient``), from one ``get_access_control`` call (object ids, not UPNs).

    Raises:
        StorageError: the call failed (the message names the path and the account); ValueError: the service
            returned an ACL that is not one.
    """
    from azure.core.exceptions import AzureError

    try:
        control = file_client.get_access_control(upn=False)
    except AzureError as exc:
        raise storage_error(exc, file_client, f"ACL of '{file_client.path_name}'") from None
    return acl_principals(control.get("acl") or "", control.get("owner") or "", control.get("group") or "")
