"""The SWIG module itself: stub completeness, typemaps, ownership."""
from __future__ import annotations

import ast
import inspect
import os
import shutil
import tempfile
import unittest

import libsandbox0
from libsandbox0 import capi, errors

STUB = os.path.join(os.path.dirname(libsandbox0.__file__), "capi.pyi")


def _stub() -> ast.Module:
    with open(STUB, encoding="utf-8") as f:
        return ast.parse(f.read())


class Stub(unittest.TestCase):
    def test_stub_matches_the_module(self) -> None:
        tree = _stub()
        stub_funcs, stub_consts, stub_classes = set(), set(), {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                stub_funcs.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                stub_consts.add(node.target.id)
            elif isinstance(node, ast.ClassDef):
                stub_classes[node.name] = {n.name for n in node.body
                                           if isinstance(n, ast.FunctionDef)}
        mod_funcs = {n for n, v in vars(capi).items() if inspect.isfunction(v)
                     and not n.startswith("_")}
        mod_consts = {n for n, v in vars(capi).items() if n.isupper()}
        mod_classes = {n for n, v in vars(capi).items() if inspect.isclass(v)
                       and n.startswith("C")}
        self.assertEqual(stub_funcs, mod_funcs)
        self.assertEqual(stub_consts, mod_consts)
        self.assertEqual(set(stub_classes), mod_classes)
        for name, methods in stub_classes.items():
            actual = {n for n in vars(getattr(capi, name))
                      if not n.startswith("_") and n not in ("this", "thisown")}
            self.assertEqual(methods - {"__init__"}, actual, name)

    def test_py_typed_marker(self) -> None:
        self.assertTrue(os.path.exists(os.path.join(os.path.dirname(STUB), "py.typed")))

    def test_version(self) -> None:
        self.assertEqual(capi.version_string(), capi.HEADER_VERSION_STRING)
        self.assertEqual(libsandbox0.__version__, capi.version_string())


class Typemaps(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.dir = tempfile.mkdtemp(prefix="s0py-capi-")
        cls.local = capi.local_open(cls.dir, manual_clock=1)
        cls.c = cls.local.client()
        cls.sid = cls.c.claim("default").id()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.local.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_errors_raise_inside_the_call(self) -> None:
        with self.assertRaises(errors.NotFoundError):
            self.c.get("nope")
        self.assertIsNone(self.c.wait(self.sid + "x", until_mask=1 << capi.STATUS_RUNNING,
                                      flags=capi.WAIT_NOTFOUND_OK))

    def test_bytes_in_and_out(self) -> None:
        for data in (b"abc", bytearray(b"abc"), memoryview(b"xabcx")[1:4]):
            self.c.files_write(self.sid, "/workspace/b", data)
            self.assertEqual(self.c.files_read(self.sid, "/workspace/b"), b"abc")
        with self.assertRaises(TypeError):
            self.c.files_write(self.sid, "/workspace/b", "text is not a buffer")
        self.c.files_write(self.sid, "/workspace/nul", b"a\x00b")
        self.assertEqual(self.c.files_read(self.sid, "/workspace/nul"), b"a\x00b")

    def test_string_vectors(self) -> None:
        sb = self.c.claim("default", env_vars=["A=1", "B=2"])
        self.assertTrue(sb.id())
        for bad in (["A=1", 3], "A=1", [b"A=1"]):
            with self.assertRaises(TypeError):
                self.c.claim("default", env_vars=bad)

    def test_callables_checked(self) -> None:
        with self.assertRaises(TypeError):
            self.c.pause_and_wait(self.sid, progress=42)

    def test_borrowed_items_keep_their_owner(self) -> None:
        self.c.snapshot_create(self.sid, name="keep")
        lst = self.c.snapshot_list(self.sid)
        item = lst.at(0)
        del lst
        import gc
        gc.collect()
        self.assertEqual(item.name(), "keep")  # the list is still alive through item
        self.assertIsNone(self.c.snapshot_list(self.sid).at(99))

    def test_error_objects(self) -> None:
        e = capi.error_new(capi.code_from_name("conflict"), "lifecycle_conflict", "busy")
        self.assertEqual((e.code(), e.reason(), e.message(), e.http_status(),
                          e.retry_after_ms(), e.body(), e.cause(), e.last_sandbox()),
                         (-11, "lifecycle_conflict", "busy", 0, -1, None, None, None))
        self.assertEqual(capi.error_map_wire("unavailable", 503, "sandbox is waking up"),
                         (capi.code_from_name("unavailable"), "waking_up"))
        self.assertEqual(capi.error_to_wire(capi.code_from_name("unavailable"), "waking_up"),
                         ("unavailable", 503, "sandbox is waking up"))

    def test_tri_states_and_statuses(self) -> None:
        self.assertEqual([capi.status_name(i) for i in range(1, 6)],
                         ["starting", "running", "paused", "terminating", "failed"])
        self.assertEqual(capi.status_from_name("bogus"), capi.STATUS_UNKNOWN)
        self.assertEqual((capi.BOOL_UNSET, capi.BOOL_TRUE, capi.BOOL_FALSE), (0, 1, 2))


if __name__ == "__main__":
    unittest.main()
