"""The files API through the official Python SDK's Sandbox (docs/wire.md §3.9)."""
from __future__ import annotations

import pytest
from sandbox0 import APIError
from sandbox0.apispec.models.file_info_type import FileInfoType

SB = "/api/v1/sandboxes"


def test_write_read_stat_list_move_delete(h):
    sb = h.claim()
    f = f"{SB}/{sb.id}/files"
    payload = bytes(range(256)) * 64
    sb.write_file("/workspace/data.bin", payload)
    h.expect_last("POST", f, 200)
    assert sb.read_file("/workspace/data.bin") == payload
    h.expect_last("GET", f, 200)

    info = sb.stat_file("/workspace/data.bin")
    h.expect_last("GET", f + "/stat", 200)
    assert (info.name, info.path, info.size) == ("data.bin", "/workspace/data.bin", len(payload))
    assert info.type_ == FileInfoType.FILE
    assert info.is_link is False

    sb.mkdir("/workspace/a/b", recursive=True)
    h.expect_last("POST", f, 201)  # mkdir answers 201 {created: true}
    assert sb.stat_file("/workspace/a/b").type_ == FileInfoType.DIR

    sb.move_file("/workspace/data.bin", "/workspace/a/b/moved.bin")
    h.expect_last("POST", f + "/move", 200)
    names = {e.name: e for e in sb.list_files("/workspace/a/b")}
    h.expect_last("GET", f + "/list", 200)
    assert names["moved.bin"].size == len(payload)

    sb.delete_file("/workspace/a/b/moved.bin")
    h.expect_last("DELETE", f, 200)
    assert "moved.bin" not in {e.name for e in sb.list_files("/workspace/a/b")}


def test_tmp_and_workspace_files(h):
    sb = h.claim()
    sb.write_file("/tmp/scratch.txt", b"scratch")
    sb.write_file("/workspace/keep.txt", b"keep")
    assert sb.read_file("/tmp/scratch.txt") == b"scratch"
    assert {e.name for e in sb.list_files("/workspace")} >= {"keep.txt"}


# The SDK's generated read module declares only 200 and 401
# (sandbox0/apispec/api/files/get_api_v1_sandboxes_id_files.py:38), so the
# server's 404 envelope for a missing file is not decoded: read_file's
# ensure_model (sandbox0/sandbox_files.py:74) raises APIError(404,
# "Unexpected API response: ...") without the code (sandbox0/response.py:20).
@pytest.mark.xfail(strict=True, reason="SDK bug: sandbox0 0.10.4 read_file drops the 404 envelope "
                   "of a missing file (apispec/api/files/get_api_v1_sandboxes_id_files.py:38 "
                   "declares only 200/401; sandbox0/sandbox_files.py:74, response.py:20)")
def test_missing_file_is_404_not_found(h):
    sb = h.claim()
    with pytest.raises(APIError) as e:
        sb.read_file("/workspace/never-written")
    assert e.value.status_code == 404
    assert e.value.code == "not_found"
