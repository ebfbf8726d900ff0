"""ADLS Gen2 path ACLs as access lists: the POSIX rules (mask, owner, other, default entries), and the real
Data Lake SDK against a fake transport answering "Path - Get Properties" with ``action=getAccessControl`` as the
service does (headers ``x-ms-owner``, ``x-ms-group``, ``x-ms-permissions``, ``x-ms-acl``; Azurite has no Data
Lake endpoint, so no emulator can run this)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import pytest
from azure.core.pipeline.transport import HttpTransport
from azure.storage.filedatalake import DataLakeFileClient

from chunking.errors import StorageError
from chunking.storage.adls_acl import acl_principals, path_access_lists
from tests.index.search_fakes import _Response


@pytest.mark.parametrize(("acl", "owner", "group", "expected"), [
    ("user::rw-,user:u1:r--,group::---,group:g1:r--,mask::r--,other::---", "o1", "g0", (("o1", "u1"), ("g1",))),
    # The mask bounds named entries and the owning group, not the owner.
    ("user::r--,user:u1:r--,group::r--,group:g1:r-x,mask::-w-,other::---", "o1", "g0", (("o1",), ())),
    ("user::---,user:u1:-wx,group::r--,mask::rwx,other::r--", "o1", "g0", ((), ("*", "g0"))),
    # Default entries are for new children; $superuser is nobody's identity.
    ("user::rwx,group::r-x,other::---,default:user:u9:r--,default:group:g9:r--", "$superuser", "$superuser",
     ((), ())),
    ("user::rwx,user:u2:r--,user:u1:r--,user:u2:r--,group::---,other::---", "o1", "g0", (("o1", "u1", "u2"), ())),
    ("", "", "", ((), ())),
])  # fmt: skip
def test_read_permission_rules(acl, owner, group, expected):
    assert acl_principals(acl, owner, group) == expected


@pytest.mark.parametrize("acl", ["user:u1", "user:u1:rw", "robot::r--", "user:a:b:r--"])
def test_malformed_acl_is_an_error(acl):
    with pytest.raises(ValueError, match="not an ACL entry"):
        acl_principals(acl)


@dataclass
class DataLakeFake(HttpTransport):
    """Answers HEAD ``/{filesystem}/{path}?action=getAccessControl`` from ``paths``; 404 for any other path."""

    paths: dict[str, dict[str, str]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def open(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "DataLakeFake":
        return self
    def __exit__(self, *args: Any) -> None: ...

    def send(self, request: Any, **kwargs: Any) -> _Response:
        self.requests.append(f"{request.method} {request.url.split('.net', 1)[1]}")
        path = request.url.split(".net/", 1)[1].split("?")[0]
        if request.method != "HEAD" or "action=getAccessControl" not in request.url or path not in self.paths:
            return _Response(request, 404, None, {"x-ms-error-code": "PathNotFound"})
        control = self.paths[path]
        return _Response(request, 200, None, {"x-ms-owner": control["owner"], "x-ms-group": control["group"],
                                              "x-ms-permissions": "rwxr-x---+", "x-ms-acl": control["acl"]})


def file_client(fake: DataLakeFake, path: str) -> DataLakeFileClient:
    key = base64.b64encode(b"k" * 32).decode()
    return DataLakeFileClient("https://acct.dfs.core.windows.net", "documents", path, transport=fake,
                              credential={"account_name": "acct", "account_key": key}, retry_total=0)


def test_access_lists_through_the_sdk():
    fake = DataLakeFake({"documents/hr/pay.pdf": {
        "owner": "0f1e-owner", "group": "$superuser",
        "acl": "user::rw-,user:5a7c-alice:r--,group::r-x,group:77aa-hr:r-x,mask::r-x,other::---"}})
    assert path_access_lists(file_client(fake, "hr/pay.pdf")) == (("0f1e-owner", "5a7c-alice"), ("77aa-hr",))
    assert fake.requests == ["HEAD /documents/hr/pay.pdf?action=getAccessControl&upn=false"]


def test_missing_path_is_a_storage_error_naming_it():
    with pytest.raises(StorageError, match="ACL of 'gone.pdf' does not exist in storage account acct"):
        path_access_lists(file_client(DataLakeFake(), "gone.pdf"))
