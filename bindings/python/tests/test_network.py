"""Network policy (RTX-04): ``client.sandboxes.get_network_policy`` /
``update_network_policy`` (GET/PUT /api/v1/sandboxes/{id}/network), the
``network=`` argument of claim and update, and the policy as the simulated
runtime enforces it (the shell's ``nc -z HOST PORT``), across pause and
resume."""
from __future__ import annotations

import unittest

from libsandbox0 import errors

from _support import BackendCase

BLOCK_PYPI = {"mode": "block-all", "egress": {"allowedDomains": ["pypi.org"]}}


class NetworkPolicy(BackendCase):
    def nc(self, sandbox_id: str, ctx: str, host: str, port: int = 443) -> str:
        """``nc -z HOST PORT; echo $?`` in a REPL context: "0" or "1"."""
        r = self.client.contexts.exec(sandbox_id, ctx, f"nc -z {host} {port}; echo $?")
        return r["stdout"].strip()

    def repl(self, sandbox_id: str) -> str:
        return self.client.contexts.create(sandbox_id)["id"]

    def test_default_policy_is_allow_all(self) -> None:
        sb = self.claim()
        self.assertEqual(self.client.sandboxes.get_network_policy(sb.id), {"mode": "allow-all"})
        ctx = self.repl(sb.id)
        self.assertEqual(self.nc(sb.id, ctx, "example.com"), "0")
        self.client.sandboxes.delete(sb.id)

    def test_update_block_all_is_enforced(self) -> None:
        sb = self.claim()
        ctx = self.repl(sb.id)
        got = self.client.sandboxes.update_network_policy(sb.id, BLOCK_PYPI)
        self.assertEqual(got, BLOCK_PYPI)
        self.assertEqual(self.client.sandboxes.get_network_policy(sb.id), BLOCK_PYPI)
        # applied to the running generation at once (the same context)
        r = self.client.contexts.exec(sb.id, ctx, "nc -z example.com 443; echo $?")
        self.assertEqual(r["stdout"].strip(), "1")
        self.assertIn("Operation not permitted (network policy: block-all)", r["stderr"])
        self.assertEqual(self.nc(sb.id, ctx, "pypi.org"), "0")
        self.assertEqual(self.nc(sb.id, ctx, "localhost", 1), "1")  # loopback: refused, not denied
        # back to allow-all
        self.assertEqual(self.client.sandboxes.update_network_policy(sb.id, {"mode": "allow-all"}),
                         {"mode": "allow-all"})
        self.assertEqual(self.nc(sb.id, ctx, "example.com"), "0")
        self.client.sandboxes.delete(sb.id)

    def test_egress_rules(self) -> None:
        sb = self.claim()
        ctx = self.repl(sb.id)
        self.client.sandboxes.update_network_policy(sb.id, {
            "mode": "allow-all",
            "egress": {"deniedDomains": ["*.example.com"], "deniedPorts": [{"port": 25}],
                       "deniedCidrs": ["10.0.0.0/8"]}})
        self.assertEqual(self.nc(sb.id, ctx, "www.example.com"), "1")
        self.assertEqual(self.nc(sb.id, ctx, "example.com"), "0")  # the apex is not below itself
        self.assertEqual(self.nc(sb.id, ctx, "pypi.org", 25), "1")
        self.assertEqual(self.nc(sb.id, ctx, "10.1.2.3"), "1")
        self.assertEqual(self.nc(sb.id, ctx, "192.0.2.1"), "0")
        self.client.sandboxes.delete(sb.id)

    def test_RTX04_policy_survives_pause_and_resume(self) -> None:
        sb = self.claim()
        self.client.sandboxes.update_network_policy(sb.id, BLOCK_PYPI)
        gen = self.client.get_sandbox(sb.id).runtime_generation
        # filesystem pause: the context ends, the new runtime gets the policy
        self.client.sandboxes.pause_and_wait(sb.id)
        self.assertEqual(self.client.sandboxes.get_network_policy(sb.id), BLOCK_PYPI)
        after = self.client.sandboxes.resume_and_wait(sb.id)
        self.assertEqual(after.runtime_generation, gen + 1)
        self.assertEqual(self.client.sandboxes.get_network_policy(sb.id), BLOCK_PYPI)
        ctx = self.repl(sb.id)
        self.assertEqual(self.nc(sb.id, ctx, "example.com"), "1")
        self.assertEqual(self.nc(sb.id, ctx, "pypi.org"), "0")
        # memory pause: the same context comes back, still under the policy
        self.client.sandboxes.pause_and_wait(sb.id, memory=True)
        self.client.sandboxes.resume_and_wait(sb.id, memory=True)
        self.assertEqual(self.nc(sb.id, ctx, "example.com"), "1")
        self.assertEqual(self.nc(sb.id, ctx, "pypi.org"), "0")
        self.client.sandboxes.delete(sb.id)

    def test_RTX04_update_while_paused_applies_on_resume(self) -> None:
        sb = self.claim()
        self.client.sandboxes.pause_and_wait(sb.id)
        self.assertEqual(self.client.sandboxes.update_network_policy(sb.id, BLOCK_PYPI),
                         BLOCK_PYPI)
        self.client.sandboxes.resume_and_wait(sb.id)
        ctx = self.repl(sb.id)
        self.assertEqual(self.nc(sb.id, ctx, "example.com"), "1")
        self.assertEqual(self.nc(sb.id, ctx, "pypi.org"), "0")
        self.client.sandboxes.delete(sb.id)

    def test_bad_policy_is_refused_and_changes_nothing(self) -> None:
        sb = self.claim()
        self.client.sandboxes.update_network_policy(sb.id, BLOCK_PYPI)
        with self.assertRaises(errors.InvalidArgumentError) as cm:
            self.client.sandboxes.update_network_policy(sb.id, {"mode": "deny-some"})
        self.assertIn("network.mode", str(cm.exception))
        self.assertEqual(cm.exception.status_code, 400)
        with self.assertRaises(errors.InvalidArgumentError) as cm:
            self.client.sandboxes.update_network_policy(
                sb.id, {"mode": "allow-all", "egress": {"allowedCidrs": ["10.0.0.0/99"]}})
        self.assertIn("network.egress.allowedCidrs", str(cm.exception))
        # a NUL inside a string would be cut short by any C JSON reader:
        # refused before sending, never stored shortened
        for policy in ({"mode": "allow-all\u0000zzz"},
                       {"mode": "block-all", "egress": {"allowedDomains": ["pypi.org\u0000x.io"]}}):
            with self.assertRaises(errors.InvalidArgumentError) as cm:
                self.client.sandboxes.update_network_policy(sb.id, policy)
            self.assertIn("NUL character", str(cm.exception))
        with self.assertRaises(errors.InvalidArgumentError):
            self.client.sandboxes.update(sb.id, network={"mode": "allow-all\u0000"})
        self.assertEqual(self.client.sandboxes.get_network_policy(sb.id), BLOCK_PYPI)
        ctx = self.repl(sb.id)
        self.assertEqual(self.nc(sb.id, ctx, "example.com"), "1")
        self.client.sandboxes.delete(sb.id)

    def test_unknown_sandbox(self) -> None:
        with self.assertRaises(errors.NotFoundError):
            self.client.sandboxes.get_network_policy("sb_doesnotexist")
        with self.assertRaises(errors.NotFoundError):
            self.client.sandboxes.update_network_policy("sb_doesnotexist", {"mode": "block-all"})
        sb = self.claim()
        self.client.sandboxes.delete(sb.id)
        with self.assertRaises(errors.NotFoundError):
            self.client.sandboxes.get_network_policy(sb.id)

    def test_arguments_checked_before_any_request(self) -> None:
        sb = self.claim()
        for bad in (["mode", "block-all"], '{"mode": "block-all"}', None, 1):
            with self.assertRaises(TypeError):
                self.client.sandboxes.update_network_policy(sb.id, bad)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            self.client.sandboxes.update(sb.id, network="block-all")  # type: ignore[arg-type]
        with self.assertRaises(errors.InvalidArgumentError) as cm:
            self.client.sandboxes.get_network_policy(sb.id + "\x00x")
        self.assertIsInstance(cm.exception, ValueError)
        self.assertEqual(cm.exception.message,
                         "sandbox_id contains a NUL character; C strings cannot carry one")
        with self.assertRaises(ValueError):
            self.client.sandboxes.update_network_policy(sb.id + "\x00x", {"mode": "block-all"})
        self.assertEqual(self.client.sandboxes.get_network_policy(sb.id), {"mode": "allow-all"})
        self.client.sandboxes.delete(sb.id)

    def test_claim_and_update_network_argument(self) -> None:
        sb = self.claim(network=BLOCK_PYPI)
        self.assertEqual(self.client.sandboxes.get_network_policy(sb.id), BLOCK_PYPI)
        ctx = self.repl(sb.id)
        self.assertEqual(self.nc(sb.id, ctx, "example.com"), "1")
        # the typed argument wins over config["network"]
        self.client.update_sandbox(sb.id, network={"mode": "allow-all"},
                                   config={"network": {"mode": "block-all"}})
        self.assertEqual(self.client.sandboxes.get_network_policy(sb.id), {"mode": "allow-all"})
        self.assertEqual(self.nc(sb.id, ctx, "example.com"), "0")
        with self.assertRaises(errors.InvalidArgumentError) as cm:
            self.client.sandboxes.update(sb.id, network={"mode": "nope"})
        self.assertIn("network.mode", str(cm.exception))
        self.assertEqual(self.client.sandboxes.get_network_policy(sb.id), {"mode": "allow-all"})
        with self.assertRaises(errors.InvalidArgumentError) as cm:
            self.claim(network={"mode": "nope"})
        self.assertIn("network.mode", str(cm.exception))
        self.client.sandboxes.delete(sb.id)


if __name__ == "__main__":
    unittest.main()
