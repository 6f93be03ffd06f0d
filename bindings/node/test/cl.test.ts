// The client lifecycle rules (docs/behaviours.md CL-01..CL-13, CL-15) through the
// TypeScript API, against s0 serve behind a recording proxy, as docs/decisions.md
// settles them (README "Deviations" lists where it overrides CL-06/CL-10).
import assert from "node:assert/strict";
import { after, afterEach, before, test } from "node:test";

import {
	APIError, ConflictError, InvalidArgumentError, NotFoundError, ProtocolError, QuotaExceededError, ResumeFailedError,
	SandboxLifecycleFailedError, SandboxWaitTimeoutError, ThrottledError, UnavailableError, isClaimStartThrottled,
} from "../src/index.js";
import { armServerFault, releaseServerFault, startRemote } from "./helpers.js";
import type { Remote } from "./helpers.js";

let remote: Remote;
const armed: string[] = [];
before(async () => { remote = await startRemote(); });
after(async () => { await remote?.stop(); });
afterEach(async () => {
	remote.proxy.rules.length = 0;
	while (armed.length)
		await releaseServerFault(remote.server, armed.pop() as string);
});

async function arm(name: string, mode = "fail", count = 0): Promise<void> {
	await armServerFault(remote.server, name, mode, count);
	armed.push(name);
}

async function claim(): Promise<string> {
	const sb = await remote.client.sandboxes.claim("default");
	remote.proxy.log.length = 0;
	return sb.id;
}

const bodies = (method: string, path: RegExp) => remote.proxy.requests(method, path).map((r) => r.body);

test("CL-01 CL-02 pauseAndWait: one POST (200 and 202 alike), then GETs until status paused && paused", async () => {
	const c = remote.client;
	const id = await claim();
	const seen: Array<[string, boolean]> = [];
	const sb = await c.sandboxes.pauseAndWait(id, { onProgress: (s) => seen.push([s.status, s.paused]) });
	assert.equal(sb.status, "paused");
	assert.equal(sb.paused, true);
	assert.deepEqual(bodies("POST", /\/pause$/), [""]);
	assert.ok(remote.proxy.requests("GET", new RegExp(`/sandboxes/${id}$`)).length >= 1);
	assert.deepEqual(seen.at(-1), ["paused", true]);
	// 202 (node channel down): accepted, the wait keeps polling and never takes the reply as done
	await c.sandboxes.resumeAndWait(id);
	await arm("node_channel");
	const r = await c.sandboxes.pause(id);
	assert.equal(r.httpStatus, 202);
	assert.equal(r.paused, false);
	await assert.rejects(c.sandboxes.pauseAndWait(id, { timeoutMs: 400, pollIntervalMs: 50 }), SandboxWaitTimeoutError);
	await releaseServerFault(remote.server, armed.pop() as string);
	const done = await c.sandboxes.pauseAndWait(id, { timeoutMs: 30_000 });
	assert.equal(done.paused, true);
	await c.sandboxes.delete(id);
});

test("CL-03 CL-15 memory pause: capture failure is SandboxLifecycleFailedError, one POST with memory true, never a filesystem pause", async () => {
	const c = remote.client;
	const id = await claim();
	await arm("capture@after-authorize", "fail", 1);
	const err = await c.sandboxes.pauseAndWait(id, { memory: true, timeoutMs: 60_000 }).then(() => null, (e: unknown) => e);
	assert.ok(err instanceof SandboxLifecycleFailedError, `got ${String(err)}`);
	assert.equal(err.sandboxId, id);
	assert.equal(err.action, "memory pause");
	assert.equal(err.lastSandbox?.status, "failed");
	assert.equal(err.lastSandbox?.id, id);
	assert.deepEqual(bodies("POST", /\/pause$/).map((b) => JSON.parse(b)), [{ memory: true }]);
	await c.sandboxes.delete(id);
});

test("CL-04 resumeAndWait: GET first, one POST, ends running at generation + 1", async () => {
	const c = remote.client;
	const id = await claim();
	const paused = await c.sandboxes.pauseAndWait(id);
	remote.proxy.log.length = 0;
	const sb = await c.sandboxes.resumeAndWait(id);
	assert.equal(sb.status, "running");
	assert.equal(sb.paused, false);
	assert.equal(sb.runtimeGeneration, (paused.runtimeGeneration ?? 0) + 1);
	const log = remote.proxy.log.map((r) => `${r.method} ${r.path.replace(id, "ID")}`);
	assert.equal(log[0], "GET /api/v1/sandboxes/ID");
	assert.deepEqual(log.filter((l) => l.startsWith("POST")), ["POST /api/v1/sandboxes/ID/resume"]);
	// a running sandbox: success without a new generation
	const again = await c.sandboxes.resumeAndWait(id);
	assert.equal(again.runtimeGeneration, sb.runtimeGeneration);
	await c.sandboxes.delete(id);
});

test("CL-05 memory resume: a failed observation at the target generation is SandboxLifecycleFailedError", async () => {
	const c = remote.client;
	const id = await claim();
	const paused = await c.sandboxes.pauseAndWait(id);
	const gen = (paused.runtimeGeneration ?? 0) + 1;
	const failed = JSON.stringify({ success: true, data: { ...snake(paused), status: "failed", paused: false, runtime_generation: gen } });
	// the POST succeeds on the server; every poll reads failed at the new generation
	remote.proxy.rules.push({ match: (r) => r.method === "GET" && r.path.endsWith(id), respond: { status: 200, headers: { "content-type": "application/json" }, body: failed }, times: 1000 });
	remote.proxy.rules.unshift({ match: (r) => r.method === "GET" && r.path.endsWith(id) && !remote.proxy.requests("POST", /\/resume$/).length, times: 1 });
	const err = await c.sandboxes.resumeAndWait(id, { memory: true, timeoutMs: 10_000 }).then(() => null, (e: unknown) => e);
	assert.ok(err instanceof SandboxLifecycleFailedError, `got ${String(err)}`);
	assert.equal(err.action, "memory resume");
	assert.equal(err.lastSandbox?.runtimeGeneration, gen);
	remote.proxy.rules.length = 0;
	await c.sandboxes.delete(id);
});

function snake(sb: Record<string, unknown>): Record<string, unknown> {
	return { id: sb.id, template_id: sb.templateId, status: sb.status, paused: sb.paused, runtime_generation: sb.runtimeGeneration };
}

test("CL-06 CL-15 wait options: RangeError before any request; first poll at once; deadline error fields", async () => {
	const c = remote.client;
	const id = await claim();
	for (const bad of [{ timeoutMs: -1 }, { timeoutMs: Number.NaN }, { pollIntervalMs: 0 }, { pollIntervalMs: -5 }, { pollIntervalMs: Infinity }])
		await assert.rejects(c.sandboxes.pauseAndWait(id, bad), RangeError, JSON.stringify(bad));
	await assert.rejects(c.sandboxes.waitForLifecycle(id, () => true, { timeoutMs: -3 }), RangeError);
	assert.equal(remote.proxy.log.length, 0, "no request was sent");
	const t0 = Date.now();
	const err = await c.sandboxes.waitForLifecycle(id, (s) => s.status === "paused", { timeoutMs: 600, pollIntervalMs: 100 })
		.then(() => null, (e: unknown) => e);
	const took = Date.now() - t0;
	assert.ok(err instanceof SandboxWaitTimeoutError);
	assert.equal(err.message, `timed out waiting for sandbox ${id} after 600ms`);
	assert.equal(err.sandboxId, id);
	assert.equal(err.timeoutMs, 600);
	assert.equal(err.lastSandbox?.status, "running");
	assert.equal(err.reason, "wait_deadline");
	assert.ok(took >= 550 && took < 2000, `returned after ${took} ms`);
	const gets = remote.proxy.requests("GET", new RegExp(`/sandboxes/${id}$`));
	assert.ok(gets.length >= 4 && gets.length <= 20, `${gets.length} polls in 600 ms with a 100 ms cap`);
	// the budget is only the caller's: the sandbox is untouched
	assert.equal((await c.sandboxes.get(id)).status, "running");
	await c.sandboxes.delete(id);
});

test("CL-07 abort stops only the local wait; the accepted pause goes on to completion", async () => {
	const c = remote.client;
	const id = await claim();
	await arm("node_channel");
	const ac = new AbortController();
	const reason = new Error("caller gave up");
	const p = c.sandboxes.pauseAndWait(id, { signal: ac.signal });
	setTimeout(() => ac.abort(reason), 200);
	await assert.rejects(p, (e) => e === reason);
	await releaseServerFault(remote.server, armed.pop() as string);
	const done = await c.sandboxes.waitForLifecycle(id, (s) => s.paused && s.status === "paused", { timeoutMs: 30_000 });
	assert.equal(done.status, "paused");
	assert.equal(remote.proxy.requests("POST", /\/pause$/).length, 1);
	await c.sandboxes.delete(id);
});

test("CL-08 a dropped reply to POST pause {memory:true}: inspected with GET and repeated with the same body", async () => {
	const c = remote.client;
	const id = await claim();
	remote.proxy.rules.push({ match: (r) => r.method === "POST" && r.path.endsWith("/pause"), dropReply: true });
	const sb = await c.sandboxes.pauseAndWait(id, { memory: true, timeoutMs: 60_000 });
	assert.equal(sb.paused, true);
	const posts = bodies("POST", /\/pause$/).map((b) => JSON.parse(b));
	assert.ok(posts.length >= 1);
	for (const b of posts)
		assert.deepEqual(b, { memory: true }, "every pause carried memory true");
	await c.sandboxes.resumeAndWait(id, { memory: true });
	await c.sandboxes.delete(id);
});

test("CL-09 request bodies: none without options, exactly {memory:<bool>} with them", async () => {
	const c = remote.client;
	const id = await claim();
	await c.sandboxes.pause(id);
	await c.sandboxes.waitForLifecycle(id, (s) => s.paused);
	await c.sandboxes.resume(id);
	await c.sandboxes.waitForLifecycle(id, (s) => s.status === "running" && !s.paused);
	await c.sandboxes.pause(id, { memory: false });
	await c.sandboxes.waitForLifecycle(id, (s) => s.paused);
	await c.sandboxes.resume(id, { memory: false });
	await c.sandboxes.waitForLifecycle(id, (s) => s.status === "running" && !s.paused);
	await c.sandboxes.pauseAndWait(id, { memory: false });
	await c.sandboxes.resumeAndWait(id, { memory: true });
	assert.deepEqual(bodies("POST", /\/pause$/), ["", '{"memory":false}', '{"memory":false}']);
	assert.deepEqual(bodies("POST", /\/resume$/), ["", '{"memory":false}', '{"memory":true}']);
	await c.sandboxes.delete(id);
});

const JSON_CT = { "content-type": "application/json" };
const envelope = (code: string, message: string) => JSON.stringify({ success: false, error: { code, message } });

test("CL-10 no automatic retries; Retry-After in whole seconds; claim-throttled predicate", async () => {
	const c = remote.client;
	remote.proxy.rules.push({ match: (r) => r.method === "POST" && r.path === "/api/v1/sandboxes",
		respond: { status: 429, headers: { ...JSON_CT, "retry-after": "3" }, body: envelope("claim_start_throttled", "slow down") } });
	const err = await c.sandboxes.claim("default").then(() => null, (e: unknown) => e);
	assert.ok(err instanceof ThrottledError && err instanceof APIError);
	assert.equal(err.retryAfter, 3);
	assert.equal(err.retryAfterMs, 3000);
	assert.equal(isClaimStartThrottled(err), true);
	assert.equal(remote.proxy.requests("POST", /^\/api\/v1\/sandboxes$/).length, 1, "not retried");
	remote.proxy.rules.push({ match: (r) => r.method === "POST" && r.path === "/api/v1/sandboxes",
		respond: { status: 429, headers: { ...JSON_CT, "retry-after": "soon" }, body: envelope("quota_exceeded", "quota") } });
	const q = await c.sandboxes.claim("default").then(() => null, (e: unknown) => e);
	assert.ok(q instanceof QuotaExceededError);
	assert.equal(q.retryAfter, undefined);
	assert.equal(isClaimStartThrottled(q), false);
	const id = (await c.sandboxes.claim("default")).id;
	remote.proxy.log.length = 0;
	remote.proxy.rules.push({ match: (r) => r.method === "POST" && r.path.endsWith("/pause"),
		respond: { status: 503, headers: JSON_CT, body: envelope("unavailable", "memory checkpoint reservation unavailable") } });
	const u = await c.sandboxes.pause(id, { memory: true }).then(() => null, (e: unknown) => e);
	assert.ok(u instanceof UnavailableError);
	assert.equal(u.reason, "reservation_unavailable");
	assert.equal(remote.proxy.requests("POST", /\/pause$/).length, 1, "503 handed to the caller");
	// runtime access: waking up is a reason, resume failure its own class
	remote.proxy.rules.push({ match: (r) => r.path.includes("/files"),
		respond: { status: 503, headers: JSON_CT, body: envelope("unavailable", "sandbox is waking up") } });
	const w = await c.sandbox(id).readFile("/x").then(() => null, (e: unknown) => e);
	assert.ok(w instanceof UnavailableError);
	assert.equal(w.reason, "waking_up");
	remote.proxy.rules.push({ match: (r) => r.path.includes("/files"),
		respond: { status: 503, headers: JSON_CT, body: envelope("sandbox_resume_failed", "resume failed") } });
	const f = await c.sandbox(id).readFile("/x").then(() => null, (e: unknown) => e);
	assert.ok(f instanceof ResumeFailedError);
	await c.sandboxes.delete(id);
});

test("CL-11 error taxonomy: wire codes to classes, raw code and message kept, request id, details, non-envelope bodies", async () => {
	const c = remote.client;
	const cases: Array<[number, string, string, new (...a: never[]) => Error]> = [
		[404, "not_found", "sandbox not found", NotFoundError],
		[409, "conflict", "conflicts with another lifecycle operation", ConflictError],
		[409, "template_not_ready", "template is building", ConflictError],
		[503, "unavailable", "memory unavailable", UnavailableError],
	];
	for (const [status, code, message, Cls] of cases) {
		remote.proxy.rules.push({ match: (r) => r.method === "GET" && r.path.endsWith("/sb_x"),
			respond: { status, headers: { ...JSON_CT, "x-request-id": `req-${code}` },
				body: JSON.stringify({ success: false, error: { code, message, details: { k: 1 } } }) } });
		const e = await c.sandboxes.get("sb_x").then(() => null, (x: unknown) => x);
		assert.ok(e instanceof Cls && e instanceof APIError, `${code} → ${String(e)}`);
		assert.equal(e.statusCode, status);
		assert.equal(e.code, code);
		assert.equal(e.message, message);
		assert.equal(e.requestId, `req-${code}`);
		assert.deepEqual(e.details, { k: 1 });
	}
	const conflict = await (async () => {
		remote.proxy.rules.push({ match: (r) => r.path.endsWith("/sb_x"),
			respond: { status: 409, headers: JSON_CT, body: envelope("conflict", "conflicts with another lifecycle operation") } });
		return c.sandboxes.get("sb_x").catch((e: unknown) => e);
	})();
	assert.equal((conflict as APIError).reason, "lifecycle_conflict");
	for (const [body, code] of [["<html>bad gateway</html>", "unexpected_response"], ["", "unknown_error"]] as const) {
		remote.proxy.rules.push({ match: (r) => r.path.endsWith("/sb_x"), respond: { status: 500, body } });
		const e = await c.sandboxes.get("sb_x").then(() => null, (x: unknown) => x);
		assert.ok(e instanceof APIError, String(e));
		assert.equal(e.code, code);
		assert.equal(e.statusCode, 500);
		if (body)
			assert.equal(e.body, body);
	}
	remote.proxy.rules.push({ match: (r) => r.path.endsWith("/sb_x"), respond: { status: 200, headers: JSON_CT, body: "[1,2]" } });
	assert.ok(await c.sandboxes.get("sb_x").catch((e: unknown) => e) instanceof ProtocolError);
});

test("CL-12 parsing tolerance: failed with paused true, unset expiries, empty runtime id, unknown fields", async () => {
	const c = remote.client;
	const data = {
		id: "sb_y", template_id: "default", status: "failed", paused: true, runtime_id: "", runtime_generation: 3,
		expires_at: null, hard_expires_at: "0001-01-01T00:00:00Z", claimed_at: "2026-01-02T03:04:05Z", brand_new_field: { a_b: 1 },
	};
	remote.proxy.rules.push({ match: (r) => r.path.endsWith("/sb_y"),
		respond: { status: 200, headers: JSON_CT, body: JSON.stringify({ success: true, data }) } });
	const sb = await c.sandboxes.get("sb_y");
	assert.equal(sb.status, "failed");
	assert.equal(sb.paused, true);
	assert.equal(sb.expiresAt, undefined);
	assert.equal(sb.hardExpiresAt, undefined);
	assert.equal(sb.runtimeId, "");
	assert.equal(sb.runtimeGeneration, 3);
	assert.ok(sb.claimedAt instanceof Date);
	assert.equal(sb.claimedAt?.toISOString(), "2026-01-02T03:04:05.000Z");
	assert.deepEqual(sb.brandNewField, { aB: 1 });
});

test("CL-13 memory fork: key required (1..255, not blank) before any request; sent as Idempotency-Key; 503 surfaced", async () => {
	const c = remote.client;
	const id = await claim();
	for (const key of [undefined, "", "   ", "k".repeat(256)])
		await assert.rejects(c.sandboxes.fork(id, { memory: true }, { idempotencyKey: key }), InvalidArgumentError, String(key));
	assert.equal(remote.proxy.log.length, 0, "no request was sent");
	remote.proxy.rules.push({ match: (r) => r.path.endsWith("/fork"),
		respond: { status: 503, headers: JSON_CT, body: envelope("unavailable", "memory fork capture is pending") } });
	const e = await c.sandboxes.fork(id, { memory: true }, { idempotencyKey: "fork-1" }).then(() => null, (x: unknown) => x);
	assert.ok(e instanceof UnavailableError);
	assert.equal(e.reason, "capture_pending");
	const child = await c.sandboxes.fork(id, { memory: true }, { idempotencyKey: "fork-1" });
	assert.equal(child.paused, true);
	assert.deepEqual(remote.proxy.requests("POST", /\/fork$/).map((r) => r.headers["idempotency-key"]), ["fork-1", "fork-1"]);
	await c.sandboxes.delete(child.id);
	await c.sandboxes.delete(id);
});

test("CL-15 client shape: new Client({token, baseUrl, userAgent, headers}) and Client.fromEnv send what they say", async () => {
	const { Client } = await import("../src/index.js");
	const c = new Client({ token: remote.server.token, baseUrl: remote.proxy.url, userAgent: "my-app/1.0", headers: { "X-Extra": "yes" } });
	remote.proxy.log.length = 0;
	await c.sandboxes.list({ limit: 1 });
	const [req] = remote.proxy.log;
	assert.equal(req.headers.authorization, `Bearer ${remote.server.token}`);
	assert.equal(req.headers["user-agent"], "my-app/1.0");
	assert.equal(req.headers["x-extra"], "yes");
	c.close();
	const saved = { url: process.env.SANDBOX0_BASE_URL, token: process.env.SANDBOX0_TOKEN };
	process.env.SANDBOX0_BASE_URL = remote.proxy.url;
	process.env.SANDBOX0_TOKEN = remote.server.token;
	try {
		const e = Client.fromEnv();
		remote.proxy.log.length = 0;
		await e.sandboxes.list();
		assert.equal(remote.proxy.log[0].headers.authorization, `Bearer ${remote.server.token}`);
		assert.match(String(remote.proxy.log[0].headers["user-agent"]), /^libsandbox0\//);
		e.close();
	} finally {
		if (saved.url === undefined) delete process.env.SANDBOX0_BASE_URL; else process.env.SANDBOX0_BASE_URL = saved.url;
		if (saved.token === undefined) delete process.env.SANDBOX0_TOKEN; else process.env.SANDBOX0_TOKEN = saved.token;
	}
});
