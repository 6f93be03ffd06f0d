"""Every exception class, raised by a real situation, and the classes'
agreement with the C error table they are generated from."""
from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import threading
import unittest

import libsandbox0 as s0
from libsandbox0 import capi, errors

from _support import SANDBOX_JSON, BackendCase, ScriptedServer, envelope_error, ok


def scripted_client(server: ScriptedServer) -> s0.Client:
    return s0.Client(token="s0_testtoken", base_url=server.base_url)


class GeneratedTable(unittest.TestCase):
    def test_tables_match_the_extension(self) -> None:
        """_codes.py (generated from error.h at build time) equals the tables
        compiled into the extension from the same X-macros."""
        self.assertEqual(list(errors.CODES), [tuple(r) for r in capi.code_table()])
        self.assertEqual(list(errors.WIRE_ERRORS), [tuple(r) for r in capi.wire_table()])
        self.assertEqual(list(errors.WIRE_REASONS), [tuple(r) for r in capi.reason_table()])

    def test_one_class_per_code(self) -> None:
        for ident, value, name, _ in errors.CODES:
            if ident in ("OK", "ITEROVER", "ERROR"):
                continue
            with self.subTest(code=ident):
                cls = errors.CLASS_BY_CODE[value]
                self.assertTrue(issubclass(cls, errors.Sandbox0Error))
                self.assertEqual((cls.s0_code, cls.kind), (value, name))
                self.assertEqual(capi.code_name(value), name)
                self.assertIs(getattr(errors, cls.__name__), cls)
                self.assertIs(getattr(s0, cls.__name__), cls)

    def test_wire_codes_map_to_api_errors(self) -> None:
        """Every wire row maps (in C) to a code whose class is an APIError."""
        for wire, status, code, reason in errors.WIRE_ERRORS:
            with self.subTest(wire=wire, status=status):
                got_code, got_reason = capi.error_map_wire(wire, status, "x")
                self.assertEqual(got_code, code)
                cls = errors.CLASS_BY_CODE[code]
                self.assertTrue(issubclass(cls, errors.APIError), cls)

    def test_official_names_and_bases(self) -> None:
        e = errors
        self.assertTrue(issubclass(e.SandboxWaitTimeoutError, TimeoutError))
        self.assertTrue(issubclass(e.InvalidArgumentError, ValueError))
        self.assertTrue(issubclass(e.APIError, e.Sandbox0Error))
        for n in ("NotFoundError", "ConflictError", "UnavailableError", "ThrottledError",
                  "QuotaExceededError", "ForbiddenError", "AuthError", "ResumeFailedError",
                  "InvalidArgumentError"):
            self.assertTrue(issubclass(getattr(e, n), e.APIError), n)
        self.assertTrue(issubclass(e.ProtocolError, e.APIError))
        for n in ("TransportError", "CanceledError",
                  "SandboxLifecycleFailedError", "SandboxWaitTimeoutError"):
            self.assertFalse(issubclass(getattr(e, n), e.APIError), n)

    def test_every_class_has_a_situation_test(self) -> None:
        """Each generated class has a test_raises_<Class> in this module."""
        names = {n for n in dir(RealSituations) if n.startswith("test_raises_")}
        for cls in list(errors.CLASS_BY_CODE.values()) + [errors.SandboxWaitTimeoutError,
                                                           errors.APIError]:
            self.assertIn("test_raises_" + cls.__name__, names)

    def test_conversion_from_error_objects(self) -> None:
        """A C error made directly converts with its fields; pickles."""
        e = errors.CLASS_BY_CODE[capi.code_from_name("resume_failed")]
        from libsandbox0._errors import _from_native
        x = _from_native(capi.error_new(e.s0_code, "snapshot_missing", "gone"))
        self.assertIsInstance(x, errors.ResumeFailedError)
        self.assertEqual((x.reason, x.message, x.code, x.status_code), (
            "snapshot_missing", "gone", "resume_failed", None))
        y = pickle.loads(pickle.dumps(x))
        self.assertEqual((type(y), y.reason, y.message), (type(x), x.reason, x.message))
        w = _from_native(capi.error_new(capi.code_from_name("timeout"), "wait_deadline", "t"))
        self.assertIsInstance(w, errors.SandboxWaitTimeoutError)
        w2 = _from_native(capi.error_new(capi.code_from_name("timeout"), "exec_timeout", "t"))
        self.assertIsInstance(w2, errors.RequestTimeoutError)


class RealSituations(BackendCase):
    """test_raises_<Class>: the class raised by something that really happens."""

    def _scripted(self, status, body, headers=None, call=None):
        with ScriptedServer([(status, headers or {}, body)]) as srv:
            c = scripted_client(srv)
            try:
                (call or (lambda: c.sandboxes.get("sb_fake")))() if call is None else call(c)
            finally:
                c.close()

    def _raises_scripted(self, cls, status, body, headers=None, call=None):
        with ScriptedServer([(status, headers or {}, body)]) as srv:
            with scripted_client(srv) as c:
                with self.assertRaises(cls) as cm:
                    if call is None:
                        c.sandboxes.get("sb_fake")
                    else:
                        call(c)
        return cm.exception

    # -- from the embedded backend --------------------------------------

    def test_raises_NotFoundError(self) -> None:
        with self.assertRaises(errors.NotFoundError) as cm:
            self.client.sandboxes.pause("sb_unknown")
        self.assertEqual(cm.exception.status_code, 404)
        sb = self.claim()
        with self.assertRaises(errors.NotFoundError) as cm:
            self.client.files.read(sb.id, "/workspace/missing")
        self.assertEqual(cm.exception.code, "file_not_found")
        self.client.sandboxes.delete(sb.id)

    def test_raises_ConflictError(self) -> None:
        sb = self.claim()
        snap = self.client.snapshots.create(sb.id, "s")
        with self.assertRaises(errors.ConflictError) as cm:  # restore needs a paused sandbox
            self.client.sandboxes.restore(sb.id, snap.id)
        self.assertEqual((cm.exception.status_code, cm.exception.reason), (409, "not_paused"))
        self.client.files.mkdir(sb.id, "/workspace/d")
        with self.assertRaises(errors.ConflictError) as cm:
            self.client.files.mkdir(sb.id, "/workspace/d")
        self.assertEqual(cm.exception.code, "path_exists")
        with self.assertRaises(errors.ConflictError) as cm:  # one opener per data directory
            s0.LocalBackend(self.dir)
        self.assertEqual(cm.exception.reason, "data_dir_locked")
        self.client.sandboxes.delete(sb.id)
        self.client.snapshots.delete(snap.id)

    def test_raises_UnavailableError(self) -> None:
        sb = self.claim()
        self.client.sandboxes.pause_and_wait(sb.id)
        self.backend.arm_fault("carrier", count=1)
        with self.assertRaises(errors.UnavailableError) as cm:
            self.client.sandboxes.resume(sb.id)
        self.assertTrue(cm.exception.retryable)
        self.client.sandboxes.delete(sb.id)

    def test_raises_ResumeFailedError(self) -> None:
        """Auto-resume on access whose resume fails: 503 sandbox_resume_failed."""
        sb = self.claim(auto_resume=True)
        self.client.sandboxes.pause_and_wait(sb.id)
        self.backend.arm_fault("carrier", count=1)
        with self.assertRaises(errors.ResumeFailedError) as cm:
            self.client.files.read(sb.id, "/workspace")
        e = cm.exception
        self.assertEqual((e.status_code, e.code), (503, "sandbox_resume_failed"))
        self.client.sandboxes.delete(sb.id)

    def test_raises_QuotaExceededError(self) -> None:
        with s0.LocalBackend(manual_clock=True, max_active_runtimes=1) as b:
            c = b.client()
            c.sandboxes.claim()
            with self.assertRaises(errors.QuotaExceededError) as cm:
                c.sandboxes.claim()
            self.assertEqual((cm.exception.status_code, cm.exception.code), (429, "quota_exceeded"))

    def test_raises_InvalidArgumentError(self) -> None:
        with self.assertRaises(errors.InvalidArgumentError) as cm:  # 400 from the server
            self.client.sandboxes.claim(ttl=100, hard_ttl=10)
        self.assertEqual((cm.exception.status_code, cm.exception.code), (400, "bad_request"))
        with self.assertRaises(errors.InvalidArgumentError) as cm:  # before any request
            s0.Client(base_url="ftp://example")
        self.assertIsNone(cm.exception.status_code)
        self.assertIsInstance(cm.exception, ValueError)
        with self.assertRaises(errors.InvalidArgumentError):
            self.client.sandboxes.pause_and_wait("x", timeout_sec=-1)
        # a fault point not in the table: refused, naming it (a misspelt
        # fault must not pass silently)
        for name, named in (("node_chanel", "node_chanel"), ("carrier@resumed", "resumed")):
            with self.assertRaises(errors.InvalidArgumentError) as cm:
                self.backend.arm_fault(name, count=1)
            self.assertIn(f'"{named}"', str(cm.exception))

    def test_raises_UnsupportedError(self) -> None:
        with s0.LocalBackend(manual_clock=False) as b:
            with self.assertRaises(errors.UnsupportedError) as cm:
                b.advance_clock(1)
            self.assertEqual(cm.exception.reason, "not_manual_clock")
        e = self._raises_scripted(errors.UnsupportedError, 405,
                                  envelope_error("method_not_allowed", "no"))
        self.assertEqual(e.status_code, 405)

    def test_raises_CanceledError(self) -> None:
        sb = self.claim()
        tok = s0.CancelToken()
        tok.cancel()
        with self.assertRaises(errors.CanceledError):
            self.client.sandboxes.pause_and_wait(sb.id, cancel=tok)
        self.assertTrue(tok.canceled)
        self.settle()
        self.client.sandboxes.delete(sb.id)

    def test_raises_UserAbortError(self) -> None:
        sb = self.claim()
        with self.assertRaises(errors.UserAbortError):
            self.client.sandboxes.wait(sb.id, until="paused", progress=lambda s, t: False)
        self.client.sandboxes.delete(sb.id)

    def test_raises_SandboxLifecycleFailedError(self) -> None:
        sb = self.claim()
        with self.assertRaises(errors.SandboxLifecycleFailedError) as cm:
            self.client.sandboxes.wait(sb.id, until="paused", fail="running")
        self.assertEqual(cm.exception.last_sandbox.id, sb.id)
        self.client.sandboxes.delete(sb.id)

    def test_raises_SandboxWaitTimeoutError(self) -> None:
        sb = self.claim()
        with self.assertRaises(errors.SandboxWaitTimeoutError) as cm:
            self.client.sandboxes.wait(sb.id, until="paused", timeout_sec=2)
        self.assertEqual(cm.exception.last_sandbox.status, "running")
        self.client.sandboxes.delete(sb.id)

    def test_raises_StorageIOError(self) -> None:
        fd, path = tempfile.mkstemp()
        os.close(fd)
        try:
            with self.assertRaises(errors.StorageIOError) as cm:
                s0.LocalBackend(path)
            self.assertEqual(cm.exception.kind, "io_error")
        finally:
            os.unlink(path)

    def test_raises_TransportError(self) -> None:
        with s0.Client(base_url="http://127.0.0.1:1", connect_timeout=2) as c:
            with self.assertRaises(errors.TransportError) as cm:
                c.sandboxes.get("sb_x")
        self.assertTrue(cm.exception.reason.startswith("curl:"))
        self.assertTrue(cm.exception.retryable)

    # -- wire answers the local backend does not produce (scripted server) --

    def test_raises_AuthError(self) -> None:
        e = self._raises_scripted(errors.AuthError, 401, envelope_error("unauthorized",
                                                                         "invalid token"))
        self.assertEqual((e.status_code, e.code, e.message), (401, "unauthorized", "invalid token"))

    def test_raises_ForbiddenError(self) -> None:
        e = self._raises_scripted(
            errors.ForbiddenError, 403,
            envelope_error("admission_restricted", "team is not allowed to start additional usage",
                           {"reason": "billing", "version": 3}),
            headers={"X-Request-Id": "req-42"})
        self.assertEqual(e.details, {"reason": "billing", "version": 3})
        self.assertEqual((e.code, e.reason, e.request_id), ("admission_restricted",
                                                            "admission_restricted", "req-42"))

    def test_raises_ThrottledError(self) -> None:
        e = self._raises_scripted(errors.ThrottledError, 429,
                                  envelope_error("claim_start_throttled", "slow down"),
                                  headers={"Retry-After": "7"},
                                  call=lambda c: c.sandboxes.claim())
        self.assertTrue(e.is_claim_start_throttled())
        self.assertEqual((e.retry_after, e.retry_after_ms), (7, 7000))
        self.assertTrue(e.retryable)

    def test_raises_RequestTimeoutError(self) -> None:
        e = self._raises_scripted(errors.RequestTimeoutError, 408,
                                  envelope_error("exec_timeout", "command timed out"))
        self.assertIsInstance(e, TimeoutError)

    def test_raises_TooLargeError(self) -> None:
        e = self._raises_scripted(errors.TooLargeError, 413,
                                  envelope_error("file_too_large", "too big"),
                                  call=lambda c: c.files.write("sb_fake", "/workspace/f", b"x"))
        self.assertEqual(e.code, "file_too_large")

    def test_raises_GoneError(self) -> None:
        self._raises_scripted(errors.GoneError, 410, envelope_error("gone", "gone"))

    def test_raises_InternalError(self) -> None:
        e = self._raises_scripted(errors.InternalError, 500,
                                  envelope_error("internal_error", "failed to claim sandbox: x"))
        self.assertEqual(e.body and b"internal_error" in e.body, True)

    def test_raises_ProtocolError(self) -> None:
        e = self._raises_scripted(errors.ProtocolError, 200, "this is not json")
        self.assertEqual(e.kind, "protocol")

    def test_raises_APIError(self) -> None:
        """Every answer of the API is an APIError, including a wire code the
        table does not know (ProtocolError, unexpected_response) and a
        non-envelope body (the API rate limiter's)."""
        e = self._raises_scripted(errors.APIError, 418, envelope_error("teapot", "short and stout"))
        self.assertIsInstance(e, errors.ProtocolError)
        self.assertEqual((e.status_code, e.code, e.message), (418, "teapot", "short and stout"))
        e = self._raises_scripted(errors.APIError, 429,
                                  {"error": "rate limit exceeded", "retry_after": 3})
        self.assertEqual((e.status_code, e.retry_after), (429, 3))

    def test_request_shape_through_http(self) -> None:
        """The HTTP client sends the Bearer token and the memory body."""
        with ScriptedServer([(200, {}, ok({"sandbox_id": "sb_fake", "paused": False,
                                            "status": "running"}))]) as srv:
            with scripted_client(srv) as c:
                r = c.sandboxes.pause("sb_fake", memory=True)
            self.assertFalse(r.paused)
            method, path, headers, body = srv.requests[0]
        self.assertEqual((method, path), ("POST", "/api/v1/sandboxes/sb_fake/pause"))
        self.assertEqual(headers.get("Authorization"), "Bearer s0_testtoken")
        self.assertEqual(body, b'{"memory":true}')

    # -- no real situation yet ------------------------------------------

    @unittest.skip("ENOMEM: needs the library's fail-after-N allocator (C fault tests cover it)")
    def test_raises_OutOfMemoryError(self) -> None:
        pass

    @unittest.skip("MemoryCaptureError: no API answer maps to it; a failed memory capture "
                   "is observed as status `failed` and raised as SandboxLifecycleFailedError "
                   "(test_client_flows.test_CL14_memory_pause_failed_raises_lifecycle_error)")
    def test_raises_MemoryCaptureError(self) -> None:
        pass

    @unittest.skip("CorruptError: needs a damaged generation; covered by the C block-store tests")
    def test_raises_CorruptError(self) -> None:
        pass

    @unittest.skip("NoSpaceError: needs a full filesystem under the data directory")
    def test_raises_NoSpaceError(self) -> None:
        pass


if __name__ == "__main__":
    unittest.main()
