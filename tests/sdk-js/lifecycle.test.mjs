// The official SDK's sandbox calls against `s0 serve`: claim, open, get,
// status, list, update, refresh, pause/resume (plain and *AndWait), memory
// pause/resume through a plain request (0.9.5 has no memory option), delete.
// Every result is compared with the server state read by a plain GET.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
	assertSandboxEquals, assertSummaryEquals, auditWire, checkStatus, checkSummaryWire, checkTime,
	expectAPIError, fromNow, sdkDate, useHarness, until,
} from "./helpers.mjs";

const SB = "/api/v1/sandboxes";
const WAIT = { timeoutMs: 30_000, pollIntervalMs: 20 };
const SLACK_MS = 30_000; /* "now + ttl" checks: generous for a loaded CI machine */

const h = useHarness();

const claim = (options) => h.claim(options);

function near(wire, ms, what) {
	checkTime(wire, what);
	const d = fromNow(wire);
	assert.ok(d <= ms + 1000 && d >= ms - SLACK_MS, `${what}=${wire} should be about now + ${ms} ms`);
}

describe("claim", () => {
	test("claim(\"default\") answers 201 and a handle matching the server", async () => {
		const sb = await claim();
		const wire = h.wire.seen[h.wire.seen.length - 1].json;
		const d = await h.state(sb.id);
		/* ClaimResponse (docs/wire.md §3.1, §6.2) as sent */
		assert.equal(wire.success, true);
		assert.deepEqual(Object.keys(wire.data).sort(),
			["pod_name", "runtime_id", "sandbox_id", "status", "template"]);
		assert.equal(wire.data.sandbox_id, d.id);
		assert.equal(wire.data.runtime_id, d.runtime_id);
		assert.equal(sb.template, "default");
		assert.equal(d.template_id, "default");
		assert.equal(sb.status, d.status);
		assert.equal(sb.status, "running");
		assert.equal(sb.podName, d.pod_name);
		assert.notEqual(sb.podName, "");
		assert.equal(sb.clusterId, undefined);
		assert.deepEqual(sb.bootstrapMounts, []);
		assert.equal(d.paused, false);
		assert.equal(d.runtime_generation, 1);
		assert.notEqual(d.runtime_id, "");
		assert.equal(d.auto_resume, true, "auto_resume defaults to true (docs/wire.md §3.1)");
		assert.equal(d.expires_at, null, "no ttl: expires_at is null (platform default)");
		assert.equal(d.hard_expires_at, null);
	});

	test("claim with config and memory (ClaimSandboxOptions)", async () => {
		const sb = await claim({
			config: { ttl: 300, hardTtl: 900, envVars: { A: "1" }, autoResume: false },
			memory: "512Mi",
		});
		const d = await h.state(sb.id);
		assert.equal(sb.status, d.status);
		near(d.expires_at, 300_000, "expires_at");
		near(d.hard_expires_at, 900_000, "hard_expires_at");
		assert.equal(d.auto_resume, false);
		assert.deepEqual(d.resources, { memory: "512Mi" });
		assertSandboxEquals(await h.sdk.sandboxes.get(sb.id), d);
	});

	test("claim with a bare SandboxConfig", async () => {
		const sb = await claim({ ttl: 120 });
		const d = await h.state(sb.id);
		near(d.expires_at, 120_000, "expires_at");
		assert.equal(d.hard_expires_at, null);
	});

	test("open() claims, close() deletes", async () => {
		const session = await h.sdk.sandboxes.open("default");
		const id = session.sandbox.id;
		assert.equal((await h.state(id)).status, "running");
		await session.close();
		h.wire.expectLast("DELETE", `${SB}/${id}`, 202);
		const r = await h.raw("GET", `${SB}/${id}`);
		assert.equal(r.status, 404);
	});
});

describe("get and status", () => {
	test("get() returns the server's Sandbox", async () => {
		const sb = await claim({ config: { ttl: 600 } });
		const s = await h.sdk.sandboxes.get(sb.id);
		h.wire.expectLast("GET", `${SB}/${sb.id}`, 200);
		assertSandboxEquals(s, await h.state(sb.id));
	});

	test("the handle from sdk.sandbox(id) and sdk.sandboxes.sandbox(id) names it", async () => {
		const sb = await claim();
		assert.equal(h.sdk.sandbox(sb.id).id, sb.id);
		assert.equal(h.sdk.sandboxes.sandbox(sb.id).id, sb.id);
	});

	test("status() returns the server's SandboxStatus", async () => {
		const sb = await claim({ config: { ttl: 600, hardTtl: 1200 } });
		const st = await h.sdk.sandboxes.status(sb.id);
		h.wire.expectLast("GET", `${SB}/${sb.id}/status`, 200);
		const raw = (await h.raw("GET", `${SB}/${sb.id}/status`)).json.data;
		const d = await h.state(sb.id);
		assert.equal(st.sandboxId, sb.id);
		assert.equal(st.templateId, d.template_id);
		assert.equal(st.teamId, d.team_id);
		assert.equal(st.podName, d.pod_name);
		assert.equal(st.status, d.status);
		checkStatus(raw.status);
		/* the status endpoint uses whole seconds (docs/wire.md §1.1, §3.4) */
		assert.match(st.claimedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
		assert.match(st.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
		assert.equal(Date.parse(st.createdAt), Math.floor(Date.parse(d.created_at) / 1000) * 1000);
		assert.equal(Date.parse(st.claimedAt), Math.floor(Date.parse(d.claimed_at) / 1000) * 1000);
		assert.equal(Date.parse(st.expiresAt), Date.parse(d.expires_at));
		assert.equal(Date.parse(st.hardExpiresAt), Date.parse(d.hard_expires_at));
		const plain = await claim();
		const st2 = await h.sdk.sandboxes.status(plain.id);
		assert.equal(st2.expiresAt, undefined, "null expires_at reads as undefined");
		assert.equal(st2.hardExpiresAt, undefined);
	});
});

describe("list", () => {
	let ids;
	before(async () => {
		ids = [];
		for (let i = 0; i < 5; i++)
			ids.push((await h.sdk.sandboxes.claim("default")).id);
		await h.sdk.sandboxes.pauseAndWait(ids[1], WAIT);
		await h.sdk.sandboxes.pauseAndWait(ids[3], WAIT);
	});
	after(async () => {
		for (const id of ids)
			await h.sdk.sandboxes.delete(id);
	});

	async function compare(options, query) {
		const res = await h.sdk.sandboxes.list(options);
		const last = h.wire.expectLast("GET", SB, 200);
		const raw = await h.raw("GET", `${SB}${query ? `?${query}` : ""}`);
		assert.equal(raw.status, 200);
		const data = raw.json.data;
		assert.ok(Array.isArray(data.sandboxes), "sandboxes is an array, never null");
		assert.equal(res.count, data.count);
		assert.equal(res.hasMore, data.has_more);
		assert.equal(res.sandboxes.length, data.sandboxes.length);
		data.sandboxes.forEach((d, i) => {
			checkSummaryWire(d);
			assertSummaryEquals(res.sandboxes[i], d);
		});
		return { res, data, query: last.query };
	}

	test("no options: every sandbox, newest first", async () => {
		const { res, data, query } = await compare(undefined, "");
		assert.equal(query, "");
		assert.equal(res.count, data.sandboxes.length);
		assert.ok(res.count >= ids.length);
		assert.equal(res.hasMore, false);
		const created = data.sandboxes.map((d) => Date.parse(d.created_at));
		assert.deepEqual(created, [...created].sort((a, b) => b - a), "sorted by created_at desc");
		for (const id of ids)
			assert.ok(res.sandboxes.some((s) => s.id === id), `${id} listed`);
	});

	test("status and paused filters", async () => {
		const paused = await compare({ status: "paused" }, "status=paused");
		assert.ok(paused.res.sandboxes.every((s) => s.status === "paused" && s.paused));
		for (const id of [ids[1], ids[3]])
			assert.ok(paused.res.sandboxes.some((s) => s.id === id));
		const p2 = await compare({ paused: true }, "paused=true");
		assert.deepEqual(p2.res.sandboxes.map((s) => s.id), paused.res.sandboxes.map((s) => s.id));
		const running = await compare({ status: "running" }, "status=running");
		assert.ok(running.res.sandboxes.every((s) => s.status === "running" && !s.paused));
		assert.ok(!running.res.sandboxes.some((s) => s.id === ids[1]));
		const notPaused = await compare({ paused: false }, "paused=false");
		assert.ok(notPaused.res.sandboxes.every((s) => !s.paused));
		assert.equal(notPaused.res.count + p2.res.count, (await h.sdk.sandboxes.list()).count);
	});

	test("template filter", async () => {
		const all = await compare({ templateId: "default" }, "template_id=default");
		assert.ok(all.res.count >= ids.length);
		const none = await compare({ templateId: "no-such-template" }, "template_id=no-such-template");
		assert.equal(none.res.count, 0);
		assert.deepEqual(none.res.sandboxes, []);
		assert.equal(none.res.hasMore, false);
	});

	test("paging with limit and offset", async () => {
		const all = (await h.sdk.sandboxes.list({ limit: 200 })).sandboxes.map((s) => s.id);
		const seen = [];
		for (let offset = 0; ; offset += 2) {
			const page = await compare({ limit: 2, offset }, `limit=2&offset=${offset}`);
			assert.equal(page.res.count, all.length);
			assert.ok(page.res.sandboxes.length <= 2);
			assert.equal(page.res.hasMore, offset + 2 < all.length);
			seen.push(...page.res.sandboxes.map((s) => s.id));
			if (!page.res.hasMore)
				break;
		}
		assert.deepEqual(seen, all);
		const past = await compare({ limit: 5, offset: all.length + 3 },
			`limit=5&offset=${all.length + 3}`);
		assert.deepEqual(past.res.sandboxes, []);
		assert.equal(past.res.hasMore, false);
		assert.equal(past.res.count, all.length);
	});

	test("bad limit, offset and status: APIError 400 bad_request", async () => {
		await expectAPIError(() => h.sdk.sandboxes.list({ limit: 0 }), 400, "bad_request");
		await expectAPIError(() => h.sdk.sandboxes.list({ limit: 201 }), 400, "bad_request");
		await expectAPIError(() => h.sdk.sandboxes.list({ offset: -1 }), 400, "bad_request");
		await expectAPIError(() => h.sdk.sandboxes.list({ status: "completed" }), 400, "bad_request");
	});
});

describe("update and refresh", () => {
	test("update() sets ttl, auto_resume and env_vars; returns the server's Sandbox", async () => {
		const sb = await claim({ config: { ttl: 60, hardTtl: 3600, envVars: { A: "1" } } });
		const s = await h.sdk.sandboxes.update(sb.id,
			{ config: { ttl: 600, autoResume: false, envVars: { B: "2" } } });
		h.wire.expectLast("PUT", `${SB}/${sb.id}`, 200);
		const d = await h.state(sb.id);
		assertSandboxEquals(s, d);
		assert.equal(d.auto_resume, false);
		near(d.expires_at, 600_000, "expires_at after update");
		assert.equal(d.status, "running");
	});

	test("update() with ttl 0 clears expires_at", async () => {
		const sb = await claim({ config: { ttl: 300 } });
		const s = await h.sdk.sandboxes.update(sb.id, { config: { ttl: 0 } });
		const d = await h.state(sb.id);
		assert.equal(d.expires_at, null);
		assertSandboxEquals(s, d);
	});

	test("updateMemory() sets resources.memory", async () => {
		const sb = await claim();
		const s = await h.sdk.sandboxes.updateMemory(sb.id, "1Gi");
		h.wire.expectLast("PUT", `${SB}/${sb.id}`, 200);
		const d = await h.state(sb.id);
		assert.deepEqual(d.resources, { memory: "1Gi" });
		assertSandboxEquals(s, d);
	});

	test("update() without config: APIError 400 bad_request", async () => {
		const sb = await claim();
		await expectAPIError(() => h.sdk.sandboxes.update(sb.id, {}), 400, "bad_request",
			/config is required/);
	});

	test("refresh() with no body re-arms ttl and hard_ttl", async () => {
		const sb = await claim({ config: { ttl: 300, hardTtl: 900 } });
		const r = await h.sdk.sandboxes.refresh(sb.id);
		h.wire.expectLast("POST", `${SB}/${sb.id}/refresh`, 200);
		const d = await h.state(sb.id);
		assert.equal(r.sandboxId, sb.id);
		assert.equal(r.expiresAt.getTime(), sdkDate(d.expires_at));
		assert.equal(r.hardExpiresAt.getTime(), sdkDate(d.hard_expires_at));
		near(d.expires_at, 300_000, "expires_at after refresh");
		near(d.hard_expires_at, 900_000, "hard_expires_at after refresh");
	});

	test("refresh({duration}) sets expires_at = now + duration", async () => {
		const sb = await claim({ config: { ttl: 300 } });
		const r = await h.sdk.sandboxes.refresh(sb.id, { duration: 45 });
		const d = await h.state(sb.id);
		assert.equal(r.expiresAt.getTime(), sdkDate(d.expires_at));
		near(d.expires_at, 45_000, "expires_at after refresh(45)");
		assert.equal(d.hard_expires_at, null);
		assert.equal(r.hardExpiresAt.getTime(), sdkDate(null));
	});

	test("refresh of a paused sandbox: APIError 409 conflict", async () => {
		const sb = await claim({ config: { ttl: 300 } });
		await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		await expectAPIError(() => h.sdk.sandboxes.refresh(sb.id), 409, "conflict");
		assert.equal((await h.state(sb.id)).status, "paused");
	});
});

describe("pause and resume", () => {
	test("pause() then resume(), plain calls", async () => {
		const sb = await claim({ config: { ttl: 300 } });
		const before0 = await h.state(sb.id);
		const p = await h.sdk.sandboxes.pause(sb.id);
		h.wire.expectLast("POST", `${SB}/${sb.id}/pause`, 200);
		assert.equal(p.sandboxId, sb.id);
		assert.equal(p.paused, false, "paused only once the checkpoint commits (docs/wire.md §6.3)");
		assert.equal(p.status, "running");
		/* the server finishes the pause on its own; poll its state */
		const d = await until("paused", 30_000, async () => {
			const s = await h.state(sb.id);
			assert.ok(!(s.status === "paused" && !s.paused), "status paused with paused false");
			return s.status === "paused" && s.paused ? s : null;
		});
		assert.equal(d.runtime_id, "", "runtime_id is \"\" while paused (docs/wire.md §6.2)");
		assert.equal(d.runtime_generation, before0.runtime_generation);
		assert.equal(d.expires_at, null, "no soft deadline while paused");
		assertSandboxEquals(await h.sdk.sandboxes.get(sb.id), d);

		const again = await h.sdk.sandboxes.pause(sb.id);
		h.wire.expectLast("POST", `${SB}/${sb.id}/pause`, 200);
		assert.deepEqual({ ...again }, { sandboxId: sb.id, paused: true, status: "paused",
			resourceUsage: undefined, updatedMemory: undefined, updatedCpu: undefined });

		const r = await h.sdk.sandboxes.resume(sb.id);
		h.wire.expectLast("POST", `${SB}/${sb.id}/resume`, 200);
		assert.equal(r.sandboxId, sb.id);
		assert.equal(r.resumed, true);
		const after1 = await h.state(sb.id);
		assert.equal(after1.status, "running");
		assert.equal(after1.paused, false);
		assert.equal(after1.runtime_generation, before0.runtime_generation + 1);
		assert.notEqual(after1.runtime_id, "");
		assert.notEqual(after1.runtime_id, before0.runtime_id);
		near(after1.expires_at, 300_000, "expires_at re-armed on resume");

		const r2 = await h.sdk.sandboxes.resume(sb.id);
		assert.equal(r2.resumed, true, "resume of a running sandbox is a success");
		const after2 = await h.state(sb.id);
		assert.equal(after2.runtime_generation, after1.runtime_generation, "no new generation");
		assert.equal(after2.runtime_id, after1.runtime_id);
	});

	test("the pause wire status moves through enum values only", async () => {
		const sb = await claim();
		const seen = new Set();
		await h.sdk.sandboxes.pause(sb.id);
		await until("paused", 30_000, async () => {
			const s = await h.state(sb.id);
			seen.add(`${s.status}/${s.paused}`);
			return s.status === "paused" && s.paused;
		}, 1);
		for (const k of seen)
			assert.ok(["running/false", "starting/false", "paused/true"].includes(k), k);
	});

	test("pauseAndWait() and resumeAndWait()", async () => {
		const sb = await claim();
		const g0 = (await h.state(sb.id)).runtime_generation;
		const p = await h.sdk.sandboxes.pauseAndWait(sb.id);
		assert.equal(p.status, "paused");
		assert.equal(p.paused, true);
		assertSandboxEquals(p, await h.state(sb.id));

		const p2 = await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		assertSandboxEquals(p2, await h.state(sb.id));

		const r = await h.sdk.sandboxes.resumeAndWait(sb.id);
		assert.equal(r.status, "running");
		assert.equal(r.paused, false);
		assert.equal(r.runtimeGeneration, g0 + 1);
		assertSandboxEquals(r, await h.state(sb.id));

		const r2 = await h.sdk.sandboxes.resumeAndWait(sb.id, WAIT);
		assert.equal(r2.runtimeGeneration, g0 + 1, "already running: same generation");
		assertSandboxEquals(r2, await h.state(sb.id));
	});

	test("waitForLifecycle() with a custom predicate", async () => {
		const sb = await claim();
		const s = await h.sdk.sandboxes.waitForLifecycle(sb.id,
			(x) => x.status === "running" && x.runtimeGeneration === 1, WAIT);
		assertSandboxEquals(s, await h.state(sb.id));
	});

	test("filesystem-only bodies: none, empty, {}, {\"memory\":false}", async () => {
		const sb = await claim();
		let gen = (await h.state(sb.id)).runtime_generation;
		const bodies = [undefined, "", {}, { memory: false }];
		for (const body of bodies) {
			const p = await h.raw("POST", `${SB}/${sb.id}/pause`, { body });
			assert.equal(p.status, 200, `pause with body ${JSON.stringify(body)}: ${p.text}`);
			await h.sdk.sandboxes.waitForLifecycle(sb.id, (x) => x.status === "paused" && x.paused, WAIT);
			const r = await h.raw("POST", `${SB}/${sb.id}/resume`, { body });
			assert.equal(r.status, 200, `resume with body ${JSON.stringify(body)}: ${r.text}`);
			assert.deepEqual(r.json.data, { sandbox_id: sb.id, resumed: true });
			const d = await h.state(sb.id);
			assert.equal(d.status, "running");
			assert.equal(d.runtime_generation, ++gen);
		}
	});

	test("memory pause (plain request): 200 paused false, then paused with a retained image", async () => {
		const sb = await claim();
		const before0 = await h.state(sb.id);
		const p = await h.raw("POST", `${SB}/${sb.id}/pause`, { body: { memory: true } });
		/* accepted once capture is authorised (docs/decisions.md "Memory pause acceptance") */
		assert.equal(p.status, 200, p.text);
		assert.equal(p.json.success, true);
		assert.equal(p.json.data.paused, false);
		assert.ok(p.headers.get("x-request-id"));
		let d = await h.state(sb.id);
		for (let i = 0; i < 500 && d.status !== "paused"; i++) {
			await new Promise((r) => setTimeout(r, 10));
			d = await h.state(sb.id);
		}
		assert.equal(d.status, "paused");
		assert.equal(d.paused, true);
		assert.equal(d.runtime_id, "");
		assert.equal(d.runtime_generation, before0.runtime_generation);
		assertSandboxEquals(await h.sdk.sandboxes.get(sb.id), d);
		/* nothing was left behind: a filesystem pause still works through the SDK */
		const paused = await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		assert.equal(paused.status, "paused");
		/* and a memory pause of a paused sandbox is the idempotent success */
		const again = await h.raw("POST", `${SB}/${sb.id}/pause`, { body: { memory: true } });
		assert.equal(again.status, 200, again.text);
		assert.deepEqual(again.json.data, { sandbox_id: sb.id, paused: true, status: "paused" });
	});

	test("memory resume (plain request) falls back to a filesystem resume", async () => {
		const sb = await claim();
		await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		const g = (await h.state(sb.id)).runtime_generation;
		const r = await h.raw("POST", `${SB}/${sb.id}/resume`, { body: { memory: true } });
		assert.equal(r.status, 200, r.text);
		assert.deepEqual(r.json.data, { sandbox_id: sb.id, resumed: true });
		const d = await h.state(sb.id);
		assert.equal(d.status, "running");
		assert.equal(d.paused, false);
		assert.equal(d.runtime_generation, g + 1);
		/* memory resume of a running sandbox: success, same generation */
		const r2 = await h.raw("POST", `${SB}/${sb.id}/resume`, { body: { memory: true } });
		assert.equal(r2.status, 200, r2.text);
		assert.equal((await h.state(sb.id)).runtime_generation, g + 1);
		/* the SDK's waiter agrees with the server */
		const s = await h.sdk.sandboxes.resumeAndWait(sb.id, WAIT);
		assertSandboxEquals(s, await h.state(sb.id));
	});

	test("malformed lifecycle bodies: 400 bad_request", async () => {
		const sb = await claim();
		for (const body of ["{", "[1]", "{\"memory\":\"yes\"}"]) {
			const r = await h.raw("POST", `${SB}/${sb.id}/pause`,
				{ body, headers: { "Content-Type": "application/json" } });
			assert.equal(r.status, 400, `${body}: ${r.text}`);
			assert.equal(r.json.error.code, "bad_request");
		}
		assert.equal((await h.state(sb.id)).status, "running");
	});
});

describe("delete", () => {
	test("delete() answers the message; the sandbox is gone", async () => {
		const sb = await claim();
		const res = await h.sdk.sandboxes.delete(sb.id);
		h.wire.expectLast("DELETE", `${SB}/${sb.id}`, 202);
		assert.equal(res.success, true);
		assert.deepEqual(res.data, { message: "sandbox terminated successfully" });
		await until("404 after delete", 30_000, async () => {
			const r = await h.raw("GET", `${SB}/${sb.id}`);
			if (r.status === 200) {
				assert.equal(r.json.data.status, "terminating");
				return false;
			}
			assert.equal(r.status, 404);
			return true;
		});
		await expectAPIError(() => h.sdk.sandboxes.get(sb.id), 404, "not_found");
		await expectAPIError(() => h.sdk.sandboxes.delete(sb.id), 404, "not_found");
		const list = await h.sdk.sandboxes.list({ limit: 200 });
		assert.ok(!list.sandboxes.some((s) => s.id === sb.id));
	});

	test("delete() of a paused sandbox", async () => {
		const sb = await claim();
		await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		await h.sdk.sandboxes.delete(sb.id);
		await until("404 after delete", 30_000, async () =>
			(await h.raw("GET", `${SB}/${sb.id}`)).status === 404);
	});
});

test("wire audit: every response the SDK saw (docs/wire.md §2.1, §3.0)", () => {
	auditWire(h.wire.seen);
});
