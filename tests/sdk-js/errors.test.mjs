// Error paths through the official SDK against `s0 serve`: unknown ids give
// the SDK's APIError with status 404 and code not_found on every call; a
// wrong, missing or malformed token gives 401 unauthorized and changes
// nothing; claim validation errors; request ids and error bodies.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { Client, SandboxWaitTimeoutError } from "sandbox0";

import { auditWire, expectAPIError, useHarness } from "./helpers.mjs";

const SB = "/api/v1/sandboxes";
const UNKNOWN = "sb_doesnotexist";

const h = useHarness();

describe("unknown ids: APIError 404 not_found", () => {
	const calls = {
		get: (c) => c.sandboxes.get(UNKNOWN),
		status: (c) => c.sandboxes.status(UNKNOWN),
		update: (c) => c.sandboxes.update(UNKNOWN, { config: { ttl: 60 } }),
		updateMemory: (c) => c.sandboxes.updateMemory(UNKNOWN, "512Mi"),
		delete: (c) => c.sandboxes.delete(UNKNOWN),
		pause: (c) => c.sandboxes.pause(UNKNOWN),
		pauseAndWait: (c) => c.sandboxes.pauseAndWait(UNKNOWN, { timeoutMs: 5000 }),
		resume: (c) => c.sandboxes.resume(UNKNOWN),
		resumeAndWait: (c) => c.sandboxes.resumeAndWait(UNKNOWN, { timeoutMs: 5000 }),
		refresh: (c) => c.sandboxes.refresh(UNKNOWN),
		waitForLifecycle: (c) => c.sandboxes.waitForLifecycle(UNKNOWN, () => true),
		createRootFSSnapshot: (c) => c.sandboxes.createRootFSSnapshot(UNKNOWN),
		listRootFSSnapshots: (c) => c.sandboxes.listRootFSSnapshots(UNKNOWN),
		getRootFSSnapshot: (c) => c.sandboxes.getRootFSSnapshot("snap_doesnotexist"),
		deleteRootFSSnapshot: (c) => c.sandboxes.deleteRootFSSnapshot("snap_doesnotexist"),
		restoreRootFS: (c) => c.sandboxes.restoreRootFS(UNKNOWN, { snapshotId: "snap_x" }),
		fork: (c) => c.sandboxes.fork(UNKNOWN),
		readFile: (c) => c.sandbox(UNKNOWN).readFile("/workspace/a"),
		writeFile: (c) => c.sandbox(UNKNOWN).writeFile("/workspace/a", "x"),
		statFile: (c) => c.sandbox(UNKNOWN).statFile("/workspace/a"),
		listFiles: (c) => c.sandbox(UNKNOWN).listFiles("/workspace"),
		mkdir: (c) => c.sandbox(UNKNOWN).mkdir("/workspace/d"),
		moveFile: (c) => c.sandbox(UNKNOWN).moveFile("/workspace/a", "/workspace/b"),
		deleteFile: (c) => c.sandbox(UNKNOWN).deleteFile("/workspace/a"),
	};
	for (const [name, call] of Object.entries(calls)) {
		test(name, async () => {
			const err = await expectAPIError(() => call(h.sdk), 404, "not_found");
			assert.ok(err.body, "APIError.body keeps the response text");
			const body = JSON.parse(err.body);
			assert.equal(body.success, false);
			assert.equal(body.error.code, "not_found");
			assert.equal(body.error.message, err.message);
			assert.equal(err.retryAfter, undefined);
		});
	}

	test("a deleted sandbox is unknown", async () => {
		const sb = await h.sdk.sandboxes.claim("default");
		await h.sdk.sandboxes.delete(sb.id);
		await expectAPIError(() => h.sdk.sandboxes.get(sb.id), 404, "not_found");
		await expectAPIError(() => h.sdk.sandboxes.resume(sb.id), 404, "not_found");
	});

	test("an unknown template: claim answers 404 not_found", async () => {
		await expectAPIError(() => h.sdk.sandboxes.claim("no-such-template"), 404, "not_found");
	});
});

describe("authentication: 401 unauthorized", () => {
	test("a wrong token: every call answers 401 and nothing changes", async () => {
		const sb = await h.sdk.sandboxes.claim("default");
		h.track(sb.id);
		const before0 = await h.state(sb.id);
		const wrong = new Client({ token: "s0_wrongwrongwrongwrong", baseUrl: h.server.url });
		const calls = [
			() => wrong.sandboxes.claim("default"),
			() => wrong.sandboxes.list(),
			() => wrong.sandboxes.get(sb.id),
			() => wrong.sandboxes.status(sb.id),
			() => wrong.sandboxes.update(sb.id, { config: { ttl: 5 } }),
			() => wrong.sandboxes.pause(sb.id),
			() => wrong.sandboxes.pauseAndWait(sb.id),
			() => wrong.sandboxes.resume(sb.id),
			() => wrong.sandboxes.refresh(sb.id, { duration: 5 }),
			() => wrong.sandboxes.createRootFSSnapshot(sb.id),
			() => wrong.sandboxes.listRootFSSnapshots(sb.id),
			() => wrong.sandboxes.fork(sb.id),
			() => wrong.sandbox(sb.id).writeFile("/workspace/evil", "x"),
			() => wrong.sandbox(sb.id).readFile("/workspace/evil"),
			() => wrong.sandboxes.delete(sb.id),
		];
		for (const call of calls)
			await expectAPIError(call, 401, "unauthorized", /^invalid token$/);
		const after0 = await h.state(sb.id);
		assert.deepEqual(after0, before0, "401s change nothing");
		assert.equal((await h.sdk.sandboxes.list()).count, 1);
		assert.deepEqual(await h.sdk.sandboxes.listRootFSSnapshots(sb.id), []);
		assert.equal((await h.raw("GET", `${SB}/${sb.id}/files/stat?path=/workspace/evil`)).status, 404);
	});

	test("a token that is not an API key, and no token at all", async () => {
		const jwt = new Client({ token: "eyJhbGciOiJIUzI1NiJ9.e30.x", baseUrl: h.server.url });
		await expectAPIError(() => jwt.sandboxes.list(), 401, "unauthorized");
		/* the SDK omits Authorization for an empty token (docs/wire.md §1.1) */
		const none = new Client({ token: "", baseUrl: h.server.url });
		await expectAPIError(() => none.sandboxes.list(), 401, "unauthorized",
			/missing authorization header/);
		const r = await h.raw("GET", SB, { headers: { Authorization: "Basic abc" }, token: null });
		assert.equal(r.status, 401);
		assert.equal(r.json.error.code, "unauthorized");
	});

	test("a token function (sync and async) is accepted like a string", async () => {
		const sync = new Client({ token: () => h.server.token, baseUrl: h.server.url });
		const async_ = new Client({ token: async () => h.server.token, baseUrl: h.server.url });
		assert.equal((await sync.sandboxes.list()).count, (await async_.sandboxes.list()).count);
	});
});

describe("other errors", () => {
	test("claim validation: 400 bad_request", async () => {
		await expectAPIError(() => h.sdk.sandboxes.claim("default", { ttl: -1 }), 400, "bad_request");
		await expectAPIError(() => h.sdk.sandboxes.claim("default", { ttl: 100, hardTtl: 10 }),
			400, "bad_request");
		await expectAPIError(() => h.sdk.sandboxes.claim(""), 400, "bad_request",
			/template is required/);
		await expectAPIError(() => h.sdk.sandboxes.claim("a/b"), 400, "bad_request");
		assert.equal((await h.sdk.sandboxes.list()).count, 0, "nothing was claimed");
	});

	test("the inbound X-Request-ID reaches APIError.requestId", async () => {
		const c = new Client({ token: h.server.token, baseUrl: h.server.url,
			headers: { "X-Request-ID": "sdk-js-req-42" } });
		const err = await expectAPIError(() => c.sandboxes.get(UNKNOWN), 404, "not_found");
		assert.equal(err.requestId, "sdk-js-req-42");
	});

	test("a lifecycle wait that cannot finish: SandboxWaitTimeoutError with the last sandbox", async () => {
		const sb = await h.sdk.sandboxes.claim("default");
		h.track(sb.id);
		let err;
		try {
			await h.sdk.sandboxes.waitForLifecycle(sb.id, (s) => s.status === "paused",
				{ timeoutMs: 150, pollIntervalMs: 20 });
		} catch (e) {
			err = e;
		}
		assert.ok(err instanceof SandboxWaitTimeoutError, `${err}`);
		assert.equal(err.sandboxId, sb.id);
		assert.equal(err.lastSandbox.id, sb.id);
		assert.equal(err.lastSandbox.status, "running");
	});
});

test("wire audit: every response the SDK saw (docs/wire.md §2.1, §3.0)", () => {
	auditWire(h.wire.seen);
});
