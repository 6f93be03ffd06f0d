"""RootFS snapshots, restore and fork through the official Python SDK
(docs/wire.md §3.8)."""
from __future__ import annotations

import pytest
from sandbox0 import APIError
from sandbox0.apispec.models.create_sandbox_root_fs_snapshot_request import (
    CreateSandboxRootFSSnapshotRequest,
)
from sandbox0.apispec.models.fork_sandbox_request import ForkSandboxRequest
from sandbox0.apispec.models.restore_sandbox_root_fs_request import RestoreSandboxRootFSRequest
from sandbox0.apispec.models.sandbox_lifecycle_status import SandboxLifecycleStatus

SB = "/api/v1/sandboxes"
SNAP = "/api/v1/sandbox-rootfs-snapshots"
WAIT = dict(timeout_sec=60, poll_interval_sec=0.05)


def test_snapshot_create_list_get_delete(h):
    sb = h.claim()
    sb.write_file("/workspace/v.txt", b"one")
    snap = h.sdk.sandboxes.create_rootfs_snapshot(
        sb.id, CreateSandboxRootFSSnapshotRequest(name="first", description="v1"))
    h.expect_last("POST", f"{SB}/{sb.id}/snapshots", 201)
    assert snap.sandbox_id == sb.id and snap.name == "first" and snap.description == "v1"

    listed = h.sdk.sandboxes.list_rootfs_snapshots(sb.id)
    h.expect_last("GET", f"{SB}/{sb.id}/snapshots", 200)
    assert [s.id for s in listed] == [snap.id]
    got = h.sdk.sandboxes.get_rootfs_snapshot(snap.id)
    h.expect_last("GET", f"{SNAP}/{snap.id}", 200)
    assert (got.id, got.created_at) == (snap.id, snap.created_at)

    deleted = h.sdk.sandboxes.delete_rootfs_snapshot(snap.id)
    h.expect_last("DELETE", f"{SNAP}/{snap.id}", 200)
    assert deleted.data.deleted is True
    with pytest.raises(APIError) as e:
        h.sdk.sandboxes.get_rootfs_snapshot(snap.id)
    assert (e.value.status_code, e.value.code) == (404, "not_found")


def test_restore_and_claim_from_snapshot(h):
    sb = h.claim()
    sb.write_file("/workspace/v.txt", b"one")
    snap = h.sdk.sandboxes.create_rootfs_snapshot(sb.id)
    sb.write_file("/workspace/v.txt", b"two")

    h.sdk.sandboxes.pause_and_wait(sb.id, **WAIT)
    r = h.sdk.sandboxes.restore_rootfs(sb.id, RestoreSandboxRootFSRequest(snapshot_id=snap.id))
    h.expect_last("POST", f"{SB}/{sb.id}/rootfs/restore", 200)
    assert (r.sandbox_id, r.snapshot_id) == (sb.id, snap.id)
    h.sdk.sandboxes.resume_and_wait(sb.id, **WAIT)
    assert sb.read_file("/workspace/v.txt") == b"one"

    other = h.claim(snapshot_id=snap.id)
    assert other.read_file("/workspace/v.txt") == b"one"


def test_fork(h):
    sb = h.claim()
    sb.write_file("/workspace/parent.txt", b"parent")
    forked = h.sdk.sandboxes.fork(sb.id, ForkSandboxRequest())
    h.expect_last("POST", f"{SB}/{sb.id}/fork", 201)
    child = forked.sandbox
    h.track(child.id)
    assert forked.source_sandbox_id == sb.id
    assert child.id != sb.id
    assert child.status == SandboxLifecycleStatus.PAUSED and child.paused

    h.sdk.sandboxes.resume_and_wait(child.id, **WAIT)
    c = h.sdk.sandboxes.sandbox(child.id)
    assert c.read_file("/workspace/parent.txt") == b"parent"
    c.write_file("/workspace/child.txt", b"child")
    assert "child.txt" not in {e.name for e in sb.list_files("/workspace")}
