// Server modes the official SDK must live with: a pause accepted while the
// node channel is down (202 by default, 200 with --sdk-compat; docs/wire.md §6.3)
// and the zero time for unset expiries under --sdk-compat (docs/wire.md §3.0).
// Faults are armed through `s0 serve --enable-admin`.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { assertSandboxEquals, assertSummaryEquals, auditWire, useHarness } from "./helpers.mjs";

const SB = "/api/v1/sandboxes";
const ZERO_TIME = "0001-01-01T00:00:00Z";
const WAIT = { timeoutMs: 30_000, pollIntervalMs: 20 };

async function arm(h, name) {
	const r = await h.raw("POST", "/admin/v1/faults", { body: { name, mode: "fail", count: 0 } });
	assert.equal(r.status, 200, r.text);
}

async function release(h, name) {
	const r = await h.raw("DELETE", `/admin/v1/faults?name=${encodeURIComponent(name)}`);
	assert.equal(r.status, 200, r.text);
}

/* A pause whose node channel is down: accepted with `acceptedStatus`, the
 * sandbox keeps running, pauseAndWait finishes once the channel is back. */
async function pauseWhileChannelDown(h, acceptedStatus) {
	const sb = await h.sdk.sandboxes.claim("default");
	h.track(sb.id);
	const gen = (await h.state(sb.id)).runtime_generation;
	await arm(h, "node_channel");
	try {
		const p = await h.sdk.sandboxes.pause(sb.id);
		h.wire.expectLast("POST", `${SB}/${sb.id}/pause`, acceptedStatus);
		assert.equal(p.sandboxId, sb.id);
		assert.equal(p.paused, false);
		assert.equal(p.status, "running");
		const again = await h.sdk.sandboxes.pause(sb.id);
		assert.equal(again.paused, false, "a repeated pause joins the same operation");
		const d = await h.state(sb.id);
		assert.equal(d.status, "running");
		assert.equal(d.paused, false);
		assert.notEqual(d.runtime_id, "", "the old runtime until the commit (docs/decisions.md 'Status while a pause runs')");
	} finally {
		await release(h, "node_channel");
	}
	const s = await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
	assert.equal(s.status, "paused");
	assert.equal(s.runtimeGeneration, gen);
	assertSandboxEquals(s, await h.state(sb.id));
	const r = await h.sdk.sandboxes.resumeAndWait(sb.id, WAIT);
	assert.equal(r.runtimeGeneration, gen + 1);
	assertSandboxEquals(r, await h.state(sb.id));
}

describe("default mode (platform: null expiries, 202 for an accepted pause)", () => {
	const h = useHarness(["--enable-admin"]);

	test("pause accepted while the node channel is down: 202, then pauseAndWait", async () => {
		await pauseWhileChannelDown(h, 202);
	});

	test("unset expiries are null; the SDK reads them as new Date(null)", async () => {
		const sb = await h.sdk.sandboxes.claim("default");
		h.track(sb.id);
		const d = await h.state(sb.id);
		assert.equal(d.expires_at, null);
		assert.equal(d.hard_expires_at, null);
		const s = await h.sdk.sandboxes.get(sb.id);
		assert.equal(s.expiresAt.getTime(), 0);
		assertSandboxEquals(s, d);
	});

	test("wire audit (202 allowed for the accepted pause)", () => {
		auditWire(h.wire.seen, { pause202: true });
	});
});

describe("--sdk-compat (published Python SDK: zero times, 200 only)", () => {
	const h = useHarness(["--enable-admin", "--sdk-compat"]);

	test("pause accepted while the node channel is down: 200, then pauseAndWait", async () => {
		await pauseWhileChannelDown(h, 200);
	});

	test("unset expiries are the zero time on Sandbox, summaries, status and refresh", async () => {
		const sb = await h.sdk.sandboxes.claim("default");
		h.track(sb.id);
		const d = await h.state(sb.id);
		assert.equal(d.expires_at, ZERO_TIME);
		assert.equal(d.hard_expires_at, ZERO_TIME);
		const s = await h.sdk.sandboxes.get(sb.id);
		assert.equal(s.expiresAt.getTime(), Date.parse(ZERO_TIME));
		assertSandboxEquals(s, d);

		const list = await h.sdk.sandboxes.list();
		const raw = (await h.raw("GET", SB)).json.data;
		assert.equal(raw.sandboxes[0].expires_at, ZERO_TIME);
		list.sandboxes.forEach((x, i) => assertSummaryEquals(x, raw.sandboxes[i]));

		const st = await h.sdk.sandboxes.status(sb.id);
		assert.equal(st.expiresAt, ZERO_TIME);
		assert.equal(st.hardExpiresAt, ZERO_TIME);

		const r = await h.sdk.sandboxes.refresh(sb.id);
		assert.equal(r.expiresAt.getTime(), Date.parse(ZERO_TIME));
		assert.equal(r.hardExpiresAt.getTime(), Date.parse(ZERO_TIME));

		const ttl = await h.sdk.sandboxes.update(sb.id, { config: { ttl: 300 } });
		assert.ok(ttl.expiresAt.getTime() > Date.now());
		assertSandboxEquals(ttl, await h.state(sb.id));
	});

	test("wire audit (200 only)", () => {
		auditWire(h.wire.seen);
	});
});
