// The embedded backend through the TS API: manual clock (TTL pause without
// sleeping), faults, inspection, snapshots/restore/fork, files, contexts,
// network policy, list, and the one-opener lock.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ConflictError, LocalBackend, NotFoundError } from "../src/index.js";
import type { Client } from "../src/index.js";
import { openLocal } from "./helpers.js";

let lb: LocalBackend;
let c: Client;
before(async () => {
	lb = await openLocal({ manualClock: true });
	c = lb.client();
});
after(() => { lb.close(); });

test("manual clock: a soft TTL pauses the sandbox when the clock passes it", async () => {
	const sb = await c.sandboxes.claim("default", { ttl: 60, autoResume: false });
	assert.ok(sb.id);
	const got = await c.sandboxes.get(sb.id);
	assert.ok(got.expiresAt instanceof Date);
	const t0 = lb.now().getTime();
	await lb.advanceClock(61_000);
	assert.ok(lb.now().getTime() >= t0 + 61_000);
	await lb.quiesce();
	const after = await c.sandboxes.waitForLifecycle(sb.id, (s) => s.paused, { timeoutMs: 10_000 });
	assert.equal(after.status, "paused");
	await c.sandboxes.delete(sb.id);
});

test("snapshots, restore and fork", async () => {
	const sb = await c.sandboxes.claim("default");
	const h = c.sandbox(sb.id);
	await h.writeFile("/workspace/v.txt", "one");
	const snap = await c.sandboxes.createRootFSSnapshot(sb.id, { name: "v1", description: "first" });
	assert.equal(snap.name, "v1");
	assert.equal(snap.sandboxId, sb.id);
	assert.equal((await c.sandboxes.getRootFSSnapshot(snap.id)).id, snap.id);
	assert.deepEqual((await c.sandboxes.listRootFSSnapshots(sb.id)).map((s) => s.id), [snap.id]);
	await h.writeFile("/workspace/v.txt", "two");
	await c.sandboxes.pauseAndWait(sb.id);
	const r = await c.sandboxes.restoreRootFS(sb.id, { snapshotId: snap.id });
	assert.equal(r.snapshotId, snap.id);
	await c.sandboxes.resumeAndWait(sb.id);
	assert.equal(Buffer.from(await h.readFile("/workspace/v.txt")).toString(), "one");
	const child = await c.sandboxes.fork(sb.id, { ttl: 600 });
	assert.equal(child.paused, true);
	await c.sandboxes.resumeAndWait(child.id);
	assert.equal(Buffer.from(await c.sandbox(child.id).readFile("/workspace/v.txt")).toString(), "one");
	await c.sandboxes.deleteRootFSSnapshot(snap.id);
	await assert.rejects(c.sandboxes.getRootFSSnapshot(snap.id), NotFoundError);
	await c.sandboxes.delete(child.id);
	await c.sandboxes.delete(sb.id);
});

test("files and contexts", async () => {
	const sb = await c.sandboxes.claim("default");
	const h = c.sandbox(sb.id);
	await h.mkdir("/workspace/d/e", true);
	await h.writeFile("/workspace/d/e/f.bin", new Uint8Array([0, 1, 2, 255]));
	assert.deepEqual([...await h.readFile("/workspace/d/e/f.bin")], [0, 1, 2, 255]);
	const st = await h.statFile("/workspace/d/e/f.bin");
	assert.equal(st.type, "file");
	assert.equal(st.size, 4);
	assert.ok(st.modTime instanceof Date);
	await h.moveFile("/workspace/d/e/f.bin", "/workspace/g.bin");
	assert.deepEqual((await h.listFiles("/workspace")).map((f) => f.name).sort(), ["d", "g.bin"]);
	await h.deleteFile("/workspace/d");
	await assert.rejects(h.statFile("/workspace/d"), NotFoundError);
	const ctx = await h.createContext({ type: "cmd", cmd: { command: ["echo", "hi"] }, waitUntilDone: true });
	assert.equal(typeof ctx.id, "string");
	const got = await h.getContext(ctx.id as string);
	assert.equal(got.id, ctx.id);
	await h.deleteContext(ctx.id as string);
	await c.sandboxes.delete(sb.id);
});

test("network policy, update, refresh, list and status", async () => {
	const sb = await c.sandboxes.claim("default", { config: { ttl: 300 }, memory: "512Mi" });
	assert.deepEqual(await c.sandboxes.getNetworkPolicy(sb.id), { mode: "allow-all" });
	const p = await c.sandboxes.updateNetworkPolicy(sb.id, { mode: "block-all" });
	assert.equal(p.mode, "block-all");
	const u = await c.sandboxes.update(sb.id, { config: { hardTtl: 3600 } });
	assert.ok(u.hardExpiresAt instanceof Date);
	const r = await c.sandboxes.refresh(sb.id, { duration: 120 });
	assert.ok(r.expiresAt instanceof Date);
	assert.equal((await c.sandboxes.status(sb.id)).status, "running");
	const page = await c.sandboxes.list({ status: "running", limit: 200 });
	assert.ok(page.sandboxes.some((s) => s.id === sb.id));
	assert.equal(typeof page.count, "number");
	const paused = await c.sandboxes.list({ paused: true });
	assert.ok(!paused.sandboxes.some((s) => s.id === sb.id));
	await c.sandboxes.delete(sb.id);
});

test("faults and inspection; a second opener of the directory gets data_dir_locked", async () => {
	const sb = await c.sandboxes.claim("default");
	lb.armFault("carrier", { count: 1 });
	await c.sandboxes.pauseAndWait(sb.id);
	await assert.rejects(c.sandboxes.resumeAndWait(sb.id), (e: Error) => e.name === "UnavailableError");
	const ins = await lb.inspect(sb.id);
	assert.equal(typeof ins, "object");
	lb.releaseFault("carrier");
	assert.equal((await c.sandboxes.resumeAndWait(sb.id)).status, "running");
	await lb.restartManager();
	await lb.gc();
	const err = await LocalBackend.open(lb.path).then(() => null, (e: unknown) => e);
	assert.ok(err instanceof ConflictError);
	assert.equal(err.reason, "data_dir_locked");
	await c.sandboxes.delete(sb.id);
});
