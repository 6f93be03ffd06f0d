"""Errors as the official Python SDK surfaces them: APIError with the
status, wire code, message and request id of the server's envelope
(docs/wire.md §2). Where the SDK's generated module does not declare a
status the server answers correctly, the test is an expected failure
naming the SDK's file and line."""
from __future__ import annotations

import pytest
from sandbox0 import APIError
from sandbox0.apispec.models.claim_request import ClaimRequest

SB = "/api/v1/sandboxes"
WAIT = dict(timeout_sec=60, poll_interval_sec=0.05)


def expect_api_error(fn, status: int, code: str) -> APIError:
    with pytest.raises(APIError) as e:
        fn()
    err = e.value
    assert err.status_code == status, err
    assert err.code == code, err
    assert err.message
    assert err.request_id, "the X-Request-ID reaches APIError.request_id"
    return err


def test_unknown_sandbox_is_404(h):
    for call in (h.sdk.sandboxes.get, h.sdk.sandboxes.status, h.sdk.sandboxes.delete,
                 h.sdk.sandboxes.pause, h.sdk.sandboxes.resume):
        err = expect_api_error(lambda: call("sb_doesnotexist"), 404, "not_found")
        assert "not found" in err.message


def test_bad_claims_are_400(h):
    err = expect_api_error(lambda: h.sdk.sandboxes.claim(""), 400, "bad_request")
    assert "template is required" in err.message
    expect_api_error(lambda: h.sdk.sandboxes.claim("a/b"), 400, "bad_request")


# claim declares 201, 400, 401, 409, 429 and 503
# (sandbox0/apispec/api/sandboxes/post_api_v1_sandboxes.py lines 36-61): the
# 404 of an unknown template (docs/wire.md §3.1) falls through to
# "Unexpected API response" without its code (sandbox0/response.py:32).
@pytest.mark.xfail(strict=True, reason="SDK bug: sandbox0 0.10.4 claim does not decode the 404 of "
                   "an unknown template (apispec/api/sandboxes/post_api_v1_sandboxes.py:36-61 "
                   "declares no 404; sandbox0/response.py:32)")
def test_unknown_template_is_404(h):
    expect_api_error(lambda: h.sdk.sandboxes.claim("no-such-template"), 404, "not_found")


def test_claim_mounts_are_refused_by_name(h):
    """Claim-time volumes as the npm SDK sends them (the Python SDK has no
    field: sent here as an additional property): a 400 naming `mounts`."""
    from sandbox0.apispec.api.sandboxes import post_api_v1_sandboxes
    from sandbox0.response import ensure_data
    from sandbox0.apispec.models.success_claim_response import SuccessClaimResponse

    body = ClaimRequest(template="default")
    body.additional_properties["mounts"] = [{"sandboxvolume_id": "vol-1",
                                             "mount_point": "/mnt/data"}]
    before = len(h.sdk.sandboxes.list())
    resp = post_api_v1_sandboxes.sync_detailed(client=h.sdk.api, body=body)
    h.expect_last("POST", SB, 400)
    with pytest.raises(APIError) as e:
        h.track(ensure_data(resp, SuccessClaimResponse).sandbox_id)
    assert (e.value.status_code, e.value.code) == (400, "bad_request")
    assert "mounts is not supported" in e.value.message
    assert len(h.sdk.sandboxes.list()) == before  # nothing claimed


def test_restore_of_running_sandbox_is_409(h):
    """Restore needs a paused sandbox: on a running one the declared 409."""
    sb = h.claim()
    snap = h.sdk.sandboxes.create_rootfs_snapshot(sb.id)
    from sandbox0.apispec.models.restore_sandbox_root_fs_request import (
        RestoreSandboxRootFSRequest,
    )
    expect_api_error(lambda: h.sdk.sandboxes.restore_rootfs(
        sb.id, RestoreSandboxRootFSRequest(snapshot_id=snap.id)), 409, "conflict")


# refresh declares 200, 401 and 404 only (sandbox0/apispec/api/sandboxes/
# post_api_v1_sandboxes_id_refresh.py, _parse_response): the 409 of a
# paused sandbox (TTL-03) becomes "Unexpected API response" without its code
# (sandbox0/response.py:32, ensure_data's fall-through).
@pytest.mark.xfail(strict=True, reason="SDK bug: sandbox0 0.10.4 refresh does not decode the "
                   "409 of a paused sandbox (apispec/api/sandboxes/post_api_v1_sandboxes_id_"
                   "refresh.py:39-49 declares 200/401/404; sandbox0/response.py:32)")
def test_refresh_of_paused_sandbox_is_409(h):
    sb = h.claim()
    h.sdk.sandboxes.pause_and_wait(sb.id, **WAIT)
    expect_api_error(lambda: h.sdk.sandboxes.refresh(sb.id), 409, "conflict")


def test_unauthorized_is_401(h):
    from sandbox0 import Client

    bad = Client(token="s0_wrong", base_url=h.server.url)
    expect_api_error(lambda: bad.sandboxes.list(), 401, "unauthorized")
