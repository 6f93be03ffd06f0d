// Network policy through the official SDK against `s0 serve` (RTX-04):
// sandbox.getNetworkPolicy() / sandbox.updateNetworkPolicy() (GET/PUT
// /api/v1/sandboxes/{id}/network, a SandboxNetworkPolicy), the policy as the
// simulated runtime enforces it (the shell's `nc -z HOST PORT`, run with the
// SDK's sandbox.cmd() and sandbox.run()), a bad policy (400 bad_request,
// nothing changed), unknown ids, and the policy across pause and resume.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { auditWire, expectAPIError, useHarness } from "./helpers.mjs";

const SB = "/api/v1/sandboxes";
const UNKNOWN = "sb_doesnotexist";
const WAIT = { timeoutMs: 30_000, pollIntervalMs: 20 };
const BLOCK_PYPI = { mode: "block-all", egress: { allowedDomains: ["pypi.org"] } };
const DENIED = /Operation not permitted \(network policy: block-all\)/;

const h = useHarness();

const claim = (options) => h.claim(options);

/** Wire data of the server's policy: GET …/network (asserts 200). */
async function wirePolicy(id) {
	const r = await h.raw("GET", `${SB}/${encodeURIComponent(id)}/network`);
	assert.equal(r.status, 200, r.text);
	assert.equal(r.json.success, true);
	return r.json.data;
}

/** `nc -z HOST PORT` as a cmd context (the SDK's sandbox.cmd, wait=true). */
async function nc(sb, host, port = 443) {
	const r = await sb.cmd(`nc -z ${host} ${port}`);
	assert.equal(r.state, "stopped", JSON.stringify(r));
	return r;
}

/** The SDK model of a SandboxNetworkPolicy, without its undefined members. */
function defined(policy) {
	return JSON.parse(JSON.stringify(policy));
}

describe("getNetworkPolicy / updateNetworkPolicy", () => {
	test("a new sandbox: {mode: allow-all}, connections allowed", async () => {
		const sb = await claim();
		const p = await sb.getNetworkPolicy();
		h.wire.expectLast("GET", `${SB}/${sb.id}/network`, 200);
		assert.equal(p.mode, "allow-all");
		assert.equal(p.egress, undefined);
		assert.deepEqual(defined(p), { mode: "allow-all" });
		assert.deepEqual(await wirePolicy(sb.id), { mode: "allow-all" });
		const r = await nc(sb, "example.com");
		assert.equal(r.exitCode, 0, r.stderr);
	});

	test("block-all with an allowed domain: returned, stored, enforced at once", async () => {
		const sb = await claim();
		const repl = await sb.run("bash", "echo ready");
		assert.equal(repl.outputRaw, "ready\n");
		const u = await sb.updateNetworkPolicy(BLOCK_PYPI);
		const last = h.wire.expectLast("PUT", `${SB}/${sb.id}/network`, 200);
		assert.deepEqual(last.json.data, BLOCK_PYPI);
		assert.equal(u.mode, "block-all");
		assert.deepEqual(u.egress.allowedDomains, ["pypi.org"]);
		assert.deepEqual(defined(u), BLOCK_PYPI);
		assert.deepEqual(defined(await sb.getNetworkPolicy()), BLOCK_PYPI);
		assert.deepEqual(await wirePolicy(sb.id), BLOCK_PYPI);

		const denied = await nc(sb, "example.com");
		assert.equal(denied.exitCode, 1);
		assert.match(denied.stderr, DENIED);
		const allowed = await nc(sb, "pypi.org");
		assert.equal(allowed.exitCode, 0, allowed.stderr);
		/* the REPL made before the update runs in the same runtime: it is held to it too */
		const again = await sb.run("bash", "nc -z example.com 443; echo $?");
		assert.match(again.outputRaw, DENIED);
		assert.match(again.outputRaw, /\n1\n$/);

		const open = await sb.updateNetworkPolicy({ mode: "allow-all" });
		assert.deepEqual(defined(open), { mode: "allow-all" });
		assert.equal((await nc(sb, "example.com")).exitCode, 0);
	});

	test("egress rules in the SDK's shape reach the runtime", async () => {
		const sb = await claim();
		const policy = { mode: "allow-all", egress: { deniedDomains: ["*.example.com"],
			deniedPorts: [{ port: 25 }], deniedCidrs: ["10.0.0.0/8"] } };
		const u = await sb.updateNetworkPolicy(policy);
		assert.deepEqual(defined(u), policy);
		assert.equal((await nc(sb, "www.example.com")).exitCode, 1);
		assert.equal((await nc(sb, "example.com")).exitCode, 0, "the apex is not below itself");
		assert.equal((await nc(sb, "pypi.org", 25)).exitCode, 1);
		assert.equal((await nc(sb, "10.1.2.3")).exitCode, 1);
		assert.equal((await nc(sb, "192.0.2.1")).exitCode, 0);
	});

	test("claim with config.network: applied before the sandbox is running", async () => {
		const sb = await claim({ config: { network: BLOCK_PYPI } });
		assert.deepEqual(defined(await sb.getNetworkPolicy()), BLOCK_PYPI);
		assert.equal((await nc(sb, "example.com")).exitCode, 1);
		assert.equal((await nc(sb, "pypi.org")).exitCode, 0);
	});
});

describe("errors", () => {
	test("a bad mode: APIError 400 bad_request naming network.mode; nothing changed", async () => {
		const sb = await claim();
		await sb.updateNetworkPolicy(BLOCK_PYPI);
		await expectAPIError(() => sb.updateNetworkPolicy({ mode: "deny-some" }), 400,
			"bad_request", /network\.mode/);
		h.wire.expectLast("PUT", `${SB}/${sb.id}/network`, 400);
		await expectAPIError(() => sb.updateNetworkPolicy({ mode: "allow-all",
			egress: { allowedCidrs: ["10.0.0.0/99"] } }), 400, "bad_request",
		/network\.egress\.allowedCidrs/);
		assert.deepEqual(await wirePolicy(sb.id), BLOCK_PYPI);
		assert.equal((await nc(sb, "example.com")).exitCode, 1, "the old policy still holds");
	});

	test("unknown or deleted sandbox: APIError 404 not_found", async () => {
		const ghost = h.sdk.sandboxes.sandbox(UNKNOWN);
		await expectAPIError(() => ghost.getNetworkPolicy(), 404, "not_found");
		await expectAPIError(() => ghost.updateNetworkPolicy({ mode: "block-all" }), 404,
			"not_found");
		const sb = await claim();
		await h.sdk.sandboxes.delete(sb.id);
		await expectAPIError(() => sb.getNetworkPolicy(), 404, "not_found");
	});
});

describe("RTX-04: the policy across pause and resume", () => {
	test("stored through a pause, applied to the resumed runtime", async () => {
		const sb = await claim();
		await sb.updateNetworkPolicy(BLOCK_PYPI);
		const gen = (await h.state(sb.id)).runtime_generation;
		const paused = await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		assert.equal(paused.status, "paused");
		assert.deepEqual(await wirePolicy(sb.id), BLOCK_PYPI);
		const running = await h.sdk.sandboxes.resumeAndWait(sb.id, WAIT);
		assert.equal(running.status, "running");
		assert.equal(running.runtimeGeneration, gen + 1);
		assert.deepEqual(defined(await sb.getNetworkPolicy()), BLOCK_PYPI);
		const denied = await nc(sb, "example.com");
		assert.equal(denied.exitCode, 1);
		assert.match(denied.stderr, DENIED);
		assert.equal((await nc(sb, "pypi.org")).exitCode, 0);
	});

	test("updated while paused: the resumed runtime gets the new policy", async () => {
		const sb = await claim();
		await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		const u = await sb.updateNetworkPolicy(BLOCK_PYPI);
		assert.deepEqual(defined(u), BLOCK_PYPI);
		await h.sdk.sandboxes.resumeAndWait(sb.id, WAIT);
		assert.equal((await nc(sb, "example.com")).exitCode, 1);
		assert.equal((await nc(sb, "pypi.org")).exitCode, 0);
	});
});

test("wire audit: every response the SDK saw (docs/wire.md §2.1, §3.0)", () => {
	auditWire(h.wire.seen);
});
