"""examples/python run offline and end with DONE."""
from __future__ import annotations

import os
import subprocess
import sys
import unittest

from _support import EXAMPLES_DIR


class Examples(unittest.TestCase):
    def _run(self, name: str) -> str:
        path = os.path.join(EXAMPLES_DIR, name)
        p = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(p.stdout.rstrip().endswith("DONE"), p.stdout)
        return p.stdout

    def test_quickstart_local(self) -> None:
        out = self._run("quickstart_local.py")
        self.assertIn("memory pause done: execution image retained", out)
        self.assertIn("paused= True", out)
        self.assertIn("runtime_generation= 2", out)
        self.assertIn("echo $GREETING -> hello", out)
        self.assertRegex(out, r"PID \d+ still running: True")
        self.assertIn("/tmp/scratch: b'scratch'", out)
        # then filesystem-only: files kept, processes and /tmp not
        self.assertIn("/workspace/notes.md: b'# kept\\n'", out)
        self.assertIn("/tmp/scratch exists: False", out)
        self.assertIn("REPL context kept: False", out)

    def test_ucloud_persistence(self) -> None:
        out = self._run("ucloud_persistence.py")
        self.assertNotIn("memory_unavailable", out)
        self.assertEqual(out.count("Sandbox has been paused sb_"), 2)
        self.assertIn("Sandbox connected sb_", out)
        self.assertIn("after connect(): generation 1 -> 2", out)
        self.assertRegex(out, r"echo \$GREETING -> hello; PID \d+ running: True; "
                              r"/tmp/cache -> loaded")
        self.assertEqual(out.count("Sandbox paused sb_"), 1)  # the "Pause sandbox" block's
        self.assertIn("was already killed", out)
        self.assertIn("timeout 2: ", out)
        self.assertIn("connect -> running (generation 3)", out)

    def test_faults_and_errors(self) -> None:
        out = self._run("faults_and_errors.py")
        self.assertIn("pause accepted with HTTP 202", out)
        self.assertIn("cancelled from another thread", out)


if __name__ == "__main__":
    unittest.main()
