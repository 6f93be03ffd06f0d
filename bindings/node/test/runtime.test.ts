// The addon's threading contract: abort is prompt, long waits never stall
// the event loop or libuv's pool, calls beyond the thread cap queue and
// complete, nothing leaks, and the process exits by itself.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

import { LocalBackend, liveObjects, setMaxThreads, threadStats } from "../src/index.js";
import type { Client } from "../src/index.js";
import { openLocal } from "./helpers.js";

let lb: LocalBackend;
let client: Client;
let blocked: string; // a sandbox whose pause is accepted but never completes
let free: string; // a running sandbox (claimed before the fault is armed)
let base: number;

before(async () => {
	base = liveObjects();
	lb = await openLocal(); // real clock
	client = lb.client();
	blocked = (await client.sandboxes.claim("default")).id;
	free = (await client.sandboxes.claim("default")).id;
	lb.armFault("node_channel", { count: 0 });
	const r = await client.sandboxes.pause(blocked);
	assert.equal(r.httpStatus, 202);
});

after(() => {
	lb.releaseFault("node_channel");
	lb.close();
	assert.equal(liveObjects(), base, "live objects back to the baseline once the backend closed");
});

test("abort rejects with signal.reason within 100 ms, and the addon's threads wind down", async () => {
	const ac = new AbortController();
	const p = client.sandboxes.pauseAndWait(blocked, { signal: ac.signal, timeoutMs: 60_000 });
	await new Promise((r) => setTimeout(r, 150));
	assert.equal(threadStats().inflight, 1);
	const reason = new Error("stop");
	const t0 = performance.now();
	ac.abort(reason);
	await assert.rejects(p, (e) => e === reason);
	const ms = performance.now() - t0;
	assert.ok(ms < 100, `abort took ${ms.toFixed(1)} ms`);
	assert.equal(threadStats().inflight, 0);
	// an already-aborted signal sends nothing and starts no thread
	const peak = threadStats();
	const ac2 = new AbortController();
	ac2.abort();
	await assert.rejects(client.sandboxes.pauseAndWait(blocked, { signal: ac2.signal }), (e: Error) => e.name === "AbortError");
	assert.equal(threadStats().inflight, peak.inflight);
	// a wait whose predicate is still pending stops promptly too
	const ac4 = new AbortController();
	const pending = client.sandboxes.waitForLifecycle(free, () => new Promise<boolean>(() => undefined), { signal: ac4.signal });
	await new Promise((r) => setTimeout(r, 50));
	const t1 = performance.now();
	ac4.abort(reason);
	await assert.rejects(pending, (e) => e === reason);
	assert.ok(performance.now() - t1 < 100);
	// a deadline is a timeout, never an abort
	const ac3 = new AbortController();
	await assert.rejects(client.sandboxes.pauseAndWait(blocked, { signal: ac3.signal, timeoutMs: 200 }),
		(e: Error) => e.name === "SandboxWaitTimeoutError");
});

test("100 concurrent waits do not stall fs.promises.readFile on the same loop (loop lag measured)", async () => {
	const ac = new AbortController();
	const waits = Array.from({ length: 100 }, () =>
		client.sandboxes.pauseAndWait(blocked, { signal: ac.signal, timeoutMs: 120_000 }).catch((e: unknown) => e));
	const h = monitorEventLoopDelay({ resolution: 5 });
	h.enable();
	const self = fileURLToPath(import.meta.url);
	const times: number[] = [];
	for (let i = 0; i < 20; i++) {
		const t0 = performance.now();
		await Promise.all([readFile(self), readFile(self), readFile(self), readFile(self), readFile(self)]);
		times.push(performance.now() - t0);
	}
	h.disable();
	const stats = threadStats();
	ac.abort();
	const results = await Promise.all(waits);
	const worstRead = Math.max(...times);
	const lagP99 = h.percentile(99) / 1e6;
	console.log(`# 100 waits: ${stats.threads} addon threads; 5 parallel readFile worst ${worstRead.toFixed(1)} ms; ` +
		`loop lag p50 ${(h.percentile(50) / 1e6).toFixed(1)} ms p99 ${lagP99.toFixed(1)} ms max ${(h.max / 1e6).toFixed(1)} ms`);
	assert.ok(stats.inflight >= 100 && stats.threads >= 100, JSON.stringify(stats));
	assert.ok(worstRead < 250, `readFile took ${worstRead.toFixed(1)} ms while 100 waits ran`);
	assert.ok(lagP99 < 100, `event loop lag p99 ${lagP99.toFixed(1)} ms`);
	assert.ok(results.every((e) => e instanceof Error && e.name === "AbortError"));
});

test("a call beyond the thread cap waits its turn in the queue and completes", async () => {
	const cap = threadStats().maxThreads;
	setMaxThreads(2);
	try {
		// two waits whose predicates we hold keep both threads busy
		const release: Array<() => void> = [];
		const gate = () => new Promise<boolean>((r) => release.push(() => r(true)));
		const id = free;
		const w1 = client.sandboxes.waitForLifecycle(id, gate);
		const w2 = client.sandboxes.waitForLifecycle(id, gate);
		while (release.length < 2)
			await new Promise((r) => setImmediate(r));
		const third = client.sandboxes.get(id);
		let settled = false;
		void third.then(() => { settled = true; });
		const s = threadStats();
		assert.equal(s.threads, 2);
		assert.equal(s.queued, 1);
		await new Promise((r) => setTimeout(r, 50));
		assert.equal(settled, false, "the queued call did not run past the cap");
		for (const r of release)
			r();
		const [a, b, c] = await Promise.all([w1, w2, third]);
		assert.equal(a.id, id);
		assert.equal(b.id, id);
		assert.equal(c.id, id);
		assert.equal(threadStats().queued, 0);
	} finally {
		setMaxThreads(cap);
	}
	assert.throws(() => setMaxThreads(0), RangeError);
});

test("an in-flight call keeps its client alive: close() mid-call, the call completes, later calls are refused", async () => {
	const c2 = lb.client();
	let release: () => void = () => undefined;
	const gate = new Promise<boolean>((r) => { release = () => r(true); });
	const w = c2.sandboxes.waitForLifecycle(free, () => gate);
	await new Promise((r) => setTimeout(r, 20));
	c2.close();
	c2.close(); // idempotent
	await assert.rejects(c2.sandboxes.get(free), /closed/);
	release();
	assert.equal((await w).id, free);
});

test("no leaked C objects after 10,000 calls (s0_live_objects)", async () => {
	const id = free;
	const before = liveObjects();
	const N = 10_000;
	const batch = 100;
	let errors = 0;
	for (let i = 0; i < N; i += batch) {
		await Promise.all(Array.from({ length: batch }, (_, k) =>
			(k % 10 === 0 ? client.sandboxes.get("sb_missing").catch(() => { errors++; }) : client.sandboxes.get(id))));
	}
	assert.equal(errors, N / 10);
	assert.equal(liveObjects(), before, "every result and error was freed");
});

test("the process exits by itself after the last call (no handle keeps the loop open)", () => {
	const script = join(fileURLToPath(new URL(".", import.meta.url)), "fixtures", "exit-after-calls.js");
	const r = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 60_000, env: process.env });
	assert.equal(r.error, undefined, `child did not exit by itself: ${String(r.error)}`);
	assert.equal(r.status, 0, r.stderr);
	assert.match(r.stdout, /^done live=0\n$/);
});
