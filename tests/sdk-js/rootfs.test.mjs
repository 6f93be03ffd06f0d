// The official SDK's RootFS calls against `s0 serve`: snapshots
// create/list/get/delete, claim from a snapshot, restore and fork, each
// checked against the server state (plain GETs) and the files inside.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
	assertSandboxEquals, auditWire, checkTime, expectAPIError, fromNow, useHarness,
} from "./helpers.mjs";

const SB = "/api/v1/sandboxes";
const SNAP = "/api/v1/sandbox-rootfs-snapshots";
const WAIT = { timeoutMs: 30_000, pollIntervalMs: 20 };
const ZERO_TIME = "0001-01-01T00:00:00Z";
const dec = new TextDecoder();

const h = useHarness();

const claim = (options) => h.claim(options);

async function read(id, path) {
	return dec.decode(await h.sdk.sandbox(id).readFile(path));
}

/** Wire `SandboxRootFSSnapshot` (docs/wire.md §3.8) against the SDK's model. */
function assertSnapshotEquals(s, d) {
	assert.equal(typeof d.id, "string");
	assert.equal(s.id, d.id);
	assert.equal(s.sandboxId, d.sandbox_id);
	assert.equal(s.name, d.name);
	assert.equal(s.description, d.description);
	checkTime(d.created_at, "snapshot.created_at");
	assert.equal(s.createdAt.getTime(), Date.parse(d.created_at));
	/* never null (the published Python SDK parses it whenever present) */
	assert.notEqual(d.expires_at, null, "snapshot expires_at: a string or absent, never null");
	if (d.expires_at === undefined) {
		assert.equal(s.expiresAt, undefined);
	} else {
		checkTime(d.expires_at, "snapshot.expires_at");
		assert.equal(s.expiresAt.getTime(), Date.parse(d.expires_at));
	}
}

async function snapshotState(snapId) {
	const r = await h.raw("GET", `${SNAP}/${snapId}`);
	assert.equal(r.status, 200, r.text);
	return r.json.data;
}

describe("snapshots", () => {
	test("create with name, description and expires_at; get; list; delete", async () => {
		const sb = await claim();
		const expiresAt = new Date(Date.now() + 3_600_000);
		const snap = await h.sdk.sandboxes.createRootFSSnapshot(sb.id,
			{ name: "first", description: "before changes", expiresAt });
		h.wire.expectLast("POST", `${SB}/${sb.id}/snapshots`, 201);
		assert.equal(snap.sandboxId, sb.id);
		assert.equal(snap.name, "first");
		assert.equal(snap.description, "before changes");
		assert.ok(Math.abs(snap.expiresAt.getTime() - expiresAt.getTime()) < 1000,
			`expires_at kept: ${snap.expiresAt.toISOString()} vs ${expiresAt.toISOString()}`);
		assertSnapshotEquals(snap, await snapshotState(snap.id));

		const got = await h.sdk.sandboxes.getRootFSSnapshot(snap.id);
		h.wire.expectLast("GET", `${SNAP}/${snap.id}`, 200);
		assert.deepEqual(got, snap);

		const st = await h.state(sb.id);
		assert.equal(st.status, "running", "a running source stays running");

		const snap2 = await h.sdk.sandboxes.createRootFSSnapshot(sb.id);
		h.wire.expectLast("POST", `${SB}/${sb.id}/snapshots`, 201);
		assert.equal(snap2.name, undefined);
		/* the manager's Go zero time for "no expiry" (docs/wire.md §3.8) */
		assert.equal((await snapshotState(snap2.id)).expires_at, ZERO_TIME);
		assert.equal(snap2.expiresAt.getTime(), Date.parse(ZERO_TIME));

		const list = await h.sdk.sandboxes.listRootFSSnapshots(sb.id);
		h.wire.expectLast("GET", `${SB}/${sb.id}/snapshots`, 200);
		const raw = (await h.raw("GET", `${SB}/${sb.id}/snapshots`)).json.data;
		assert.equal(raw.count, 2);
		assert.equal(list.length, raw.snapshots.length);
		list.forEach((s, i) => assertSnapshotEquals(s, raw.snapshots[i]));
		assert.deepEqual(list.map((s) => s.id), [snap2.id, snap.id], "newest first");

		const del = await h.sdk.sandboxes.deleteRootFSSnapshot(snap.id);
		h.wire.expectLast("DELETE", `${SNAP}/${snap.id}`, 200);
		assert.deepEqual({ ...del }, { success: true, data: { deleted: true } });
		assert.equal((await h.raw("GET", `${SNAP}/${snap.id}`)).status, 404);
		await expectAPIError(() => h.sdk.sandboxes.getRootFSSnapshot(snap.id), 404, "not_found");
		await expectAPIError(() => h.sdk.sandboxes.deleteRootFSSnapshot(snap.id), 404, "not_found");
		assert.deepEqual((await h.sdk.sandboxes.listRootFSSnapshots(sb.id)).map((s) => s.id),
			[snap2.id]);
		await h.sdk.sandboxes.deleteRootFSSnapshot(snap2.id);
		assert.deepEqual(await h.sdk.sandboxes.listRootFSSnapshots(sb.id), []);
		assert.deepEqual((await h.raw("GET", `${SB}/${sb.id}/snapshots`)).json.data,
			{ snapshots: [], count: 0 });
	});

	test("snapshot of a paused sandbox; the source stays paused", async () => {
		const sb = await claim();
		await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		const snap = await h.sdk.sandboxes.createRootFSSnapshot(sb.id, { name: "paused" });
		h.wire.expectLast("POST", `${SB}/${sb.id}/snapshots`, 201);
		assertSnapshotEquals(snap, await snapshotState(snap.id));
		const st = await h.state(sb.id);
		assert.equal(st.status, "paused");
		assert.equal(st.paused, true);
	});

	test("expires_at in the past: APIError 400 bad_request", async () => {
		const sb = await claim();
		await expectAPIError(() => h.sdk.sandboxes.createRootFSSnapshot(sb.id,
			{ expiresAt: new Date(Date.now() - 60_000) }), 400, "bad_request");
		assert.deepEqual(await h.sdk.sandboxes.listRootFSSnapshots(sb.id), []);
	});

	test("claim from a snapshot starts with its files", async () => {
		const sb = await claim();
		await h.sdk.sandbox(sb.id).writeFile("/workspace/seed.txt", "from the snapshot");
		const snap = await h.sdk.sandboxes.createRootFSSnapshot(sb.id, { name: "seed" });
		await h.sdk.sandbox(sb.id).writeFile("/workspace/seed.txt", "changed later");
		const child = await claim({ snapshotId: snap.id });
		const d = await h.state(child.id);
		assert.equal(d.status, "running");
		assert.equal(child.status, d.status);
		assert.equal(await read(child.id, "/workspace/seed.txt"), "from the snapshot");
		assert.equal(await read(sb.id, "/workspace/seed.txt"), "changed later");
		await expectAPIError(() => h.sdk.sandboxes.claim("default", { snapshotId: "snap_nope" }),
			404, "not_found");
	});
});

describe("restore", () => {
	test("restoreRootFS() of a paused sandbox brings the snapshot's files back", async () => {
		const sb = await claim();
		const box = h.sdk.sandbox(sb.id);
		await box.writeFile("/workspace/a.txt", "v1");
		const snap = await h.sdk.sandboxes.createRootFSSnapshot(sb.id, { name: "v1" });
		await box.writeFile("/workspace/a.txt", "v2");
		await box.writeFile("/workspace/new.txt", "made after the snapshot");

		await expectAPIError(() => h.sdk.sandboxes.restoreRootFS(sb.id, { snapshotId: snap.id }),
			409, "conflict");
		assert.equal((await h.state(sb.id)).status, "running");

		const paused = await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		const r = await h.sdk.sandboxes.restoreRootFS(sb.id, { snapshotId: snap.id });
		h.wire.expectLast("POST", `${SB}/${sb.id}/rootfs/restore`, 200);
		assert.deepEqual({ ...r }, { sandboxId: sb.id, snapshotId: snap.id, status: "paused" });
		const d = await h.state(sb.id);
		assert.equal(d.status, "paused");
		assert.equal(d.paused, true);
		assert.equal(d.runtime_generation, paused.runtimeGeneration);

		const resumed = await h.sdk.sandboxes.resumeAndWait(sb.id, WAIT);
		assertSandboxEquals(resumed, await h.state(sb.id));
		assert.equal(await read(sb.id, "/workspace/a.txt"), "v1");
		await expectAPIError(() => box.statFile("/workspace/new.txt"), 404, "file_not_found");
		/* the snapshot is still there and unchanged */
		assert.equal((await h.sdk.sandboxes.getRootFSSnapshot(snap.id)).id, snap.id);
	});

	test("restore errors: blank snapshot_id 400, unknown snapshot 404", async () => {
		const sb = await claim();
		await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		await expectAPIError(() => h.sdk.sandboxes.restoreRootFS(sb.id, { snapshotId: " " }),
			400, "bad_request", /snapshot_id is required/);
		await expectAPIError(() => h.sdk.sandboxes.restoreRootFS(sb.id, { snapshotId: "snap_nope" }),
			404, "not_found");
		assert.equal((await h.state(sb.id)).status, "paused");
	});
});

describe("fork", () => {
	test("fork() of a running sandbox: 201, a paused child with the parent's files", async () => {
		const sb = await claim({ config: { ttl: 300, hardTtl: 900 } });
		const box = h.sdk.sandbox(sb.id);
		await box.writeFile("/workspace/f.txt", "parent data");
		const parentBefore = await h.state(sb.id);

		const f = await h.sdk.sandboxes.fork(sb.id);
		h.wire.expectLast("POST", `${SB}/${sb.id}/fork`, 201);
		h.track(f.sandbox.id);
		assert.equal(f.sourceSandboxId, sb.id);
		assert.notEqual(f.sandbox.id, sb.id);
		assert.equal(f.sandbox.status, "paused");
		assert.equal(f.sandbox.paused, true);
		const child = await h.state(f.sandbox.id);
		assertSandboxEquals(f.sandbox, child);
		assert.equal(child.template_id, parentBefore.template_id);
		assert.equal(child.hard_expires_at, parentBefore.hard_expires_at,
			"unset hard_ttl: the source's absolute deadline is inherited");

		const parent = await h.state(sb.id);
		assert.equal(parent.status, "running");
		assert.equal(parent.runtime_id, parentBefore.runtime_id, "the parent keeps its runtime");
		assert.equal(parent.runtime_generation, parentBefore.runtime_generation);

		const running = await h.sdk.sandboxes.resumeAndWait(f.sandbox.id, WAIT);
		assertSandboxEquals(running, await h.state(f.sandbox.id));
		assert.equal(await read(f.sandbox.id, "/workspace/f.txt"), "parent data");
		await h.sdk.sandbox(f.sandbox.id).writeFile("/workspace/f.txt", "child data");
		assert.equal(await read(sb.id, "/workspace/f.txt"), "parent data", "branches are independent");
	});

	test("fork() with ttl/hard_ttl overrides, and of a paused source", async () => {
		const sb = await claim({ config: { ttl: 300, hardTtl: 900 } });
		const f = await h.sdk.sandboxes.fork(sb.id, { config: { ttl: 60, hardTtl: 120 } });
		h.wire.expectLast("POST", `${SB}/${sb.id}/fork`, 201);
		h.track(f.sandbox.id);
		const child = await h.state(f.sandbox.id);
		assertSandboxEquals(f.sandbox, child);
		const d = fromNow(child.hard_expires_at);
		assert.ok(d > 60_000 && d <= 121_000, `hard_expires_at about now + 120 s: ${child.hard_expires_at}`);

		await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		const f2 = await h.sdk.sandboxes.fork(sb.id, { config: { hardTtl: 0 } });
		h.track(f2.sandbox.id);
		const child2 = await h.state(f2.sandbox.id);
		assertSandboxEquals(f2.sandbox, child2);
		assert.equal(child2.hard_expires_at, null, "hard_ttl 0 disables the deadline");
		assert.equal((await h.state(sb.id)).status, "paused", "a paused source stays paused");
	});

	test("fork errors: unknown source 404, bad config 400", async () => {
		await expectAPIError(() => h.sdk.sandboxes.fork("sb_nope"), 404, "not_found");
		const sb = await claim();
		await expectAPIError(() => h.sdk.sandboxes.fork(sb.id, { config: { ttl: -1 } }),
			400, "bad_request");
		await expectAPIError(() => h.sdk.sandboxes.fork(sb.id, { config: { ttl: 60, hardTtl: 30 } }),
			400, "bad_request");
	});
});

test("wire audit: every response the SDK saw (docs/wire.md §2.1, §3.0)", () => {
	auditWire(h.wire.seen);
});
