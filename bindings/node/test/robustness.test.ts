// What a hostile caller does: Workers terminated mid-call, one signal
// shared by many calls, options of the wrong shape from JS, TTLs and
// filters the types forbid, a predicate that throws `undefined`, a
// temporary LocalBackend closed with calls in flight.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { getEventListeners } from "node:events";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { Client, LocalBackend, SandboxWaitTimeoutError, liveObjects } from "../src/index.js";
import type { ClientOptions } from "../src/index.js";
import { openLocal } from "./helpers.js";

let lb: LocalBackend;
let client: Client;
let blocked: string; // a sandbox whose pause is accepted but never completes
let free: string; // a running sandbox

before(async () => {
	lb = await openLocal();
	client = lb.client();
	blocked = (await client.sandboxes.claim("default")).id;
	free = (await client.sandboxes.claim("default")).id;
	lb.armFault("node_channel", { count: 0 });
	assert.equal((await client.sandboxes.pause(blocked)).httpStatus, 202);
});

after(() => {
	lb.releaseFault("node_channel");
	lb.close();
});

test("a Worker terminated with calls in flight does not crash the process", () => {
	const script = join(fileURLToPath(new URL(".", import.meta.url)), "fixtures", "worker-terminate.js");
	const r = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 60_000, env: process.env });
	assert.equal(r.error, undefined, String(r.error));
	assert.equal(r.signal, null, `child killed by ${r.signal}: ${r.stderr}`);
	assert.equal(r.status, 0, r.stderr);
	assert.equal(r.stdout, "main running\n");
});

test("one AbortSignal shared by 50 waits: one listener, no MaxListenersExceededWarning, all reject with its reason", async () => {
	const warnings: Error[] = [];
	const onWarning = (w: Error) => { warnings.push(w); };
	process.on("warning", onWarning);
	try {
		const ac = new AbortController();
		const waits = Array.from({ length: 50 }, () =>
			client.sandboxes.pauseAndWait(blocked, { signal: ac.signal, timeoutMs: 60_000 }).catch((e: unknown) => e));
		assert.equal(getEventListeners(ac.signal, "abort").length, 1);
		const reason = new Error("stop all");
		ac.abort(reason);
		const results = await Promise.all(waits);
		assert.ok(results.every((e) => e === reason));
		// a signal outliving its calls keeps no listener of theirs
		const ac2 = new AbortController();
		await client.sandboxes.resumeAndWait(free, { signal: ac2.signal });
		await new Promise((r) => setImmediate(r)); // emitWarning reports on the next tick
		assert.deepEqual(warnings.map((w) => w.name), []);
	} finally {
		process.off("warning", onWarning);
	}
});

test("wait options of the wrong shape from JS are TypeErrors before any call, and leak no cancel token", async () => {
	const base = liveObjects();
	const s = client.sandboxes as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
	await assert.rejects(s.pauseAndWait!.call(client.sandboxes, blocked, { signal: {} }),
		{ name: "TypeError", message: "signal must be an AbortSignal" });
	await assert.rejects(s.resumeAndWait!.call(client.sandboxes, free, { onProgress: 5 }),
		{ name: "TypeError", message: "onProgress must be a function" });
	await assert.rejects(s.resumeAndWait!.call(client.sandboxes, free, 5),
		{ name: "TypeError", message: "wait options must be an object" });
	assert.equal(liveObjects(), base);
});

test("a finite timeoutMs or pollIntervalMs past 2^53 is accepted (no deadline, a capped backoff)", async () => {
	const sb = await client.sandboxes.resumeAndWait(free, { timeoutMs: 1e20, pollIntervalMs: 1e20 });
	assert.equal(sb.status, "running");
});

test("TTLs must be whole seconds 0..2^31-1: -1 is refused, never silently left unset (claim, update, fork)", async () => {
	for (const ttl of [-1, 1.5, 2 ** 31]) {
		await assert.rejects(client.sandboxes.claim("default", { ttl }), RangeError, `ttl ${ttl}`);
		await assert.rejects(client.sandboxes.claim("default", { config: { hardTtl: ttl } }), RangeError);
		await assert.rejects(client.sandboxes.update(free, { config: { ttl } }), RangeError);
		await assert.rejects(client.sandboxes.fork(free, { ttl }), RangeError);
	}
	await assert.rejects(client.sandboxes.claim("default", { ttl: "5" as unknown as number }), TypeError);
	const sb = await client.sandboxes.update(free, { config: { ttl: 0 } });
	assert.equal(sb.id, free);
});

test("list refuses a status that is not a lifecycle state instead of listing everything", async () => {
	const list = client.sandboxes.list.bind(client.sandboxes) as (o: unknown) => Promise<unknown>;
	await assert.rejects(list({ status: "bogus" }), RangeError);
	await assert.rejects(list({ status: "toString" }), RangeError);
	const r = await client.sandboxes.list({ status: "running" });
	assert.ok(r.sandboxes.some((s) => s.id === free));
});

test("a predicate that throws undefined rejects the wait with undefined (the exception itself)", async () => {
	let caught: unknown = "not rejected";
	try {
		await client.sandboxes.waitForLifecycle(free, () => { throw undefined; });
	} catch (e) {
		caught = e;
	}
	assert.equal(caught, undefined);
});

test("pause/resume with null options send no body, like absent options", async () => {
	const pause = client.sandboxes.pause.bind(client.sandboxes) as (id: string, o: unknown) => Promise<{ paused?: boolean }>;
	await assert.rejects(pause(free, 5), TypeError);
	const r = await pause(free, null);
	assert.equal(typeof r, "object");
	await client.sandboxes.resumeAndWait(free);
});

test("LocalBackend.close() with calls in flight keeps its temporary directory until the last call ends, then removes it", async () => {
	const base = liveObjects();
	const tmp = await LocalBackend.open(); // a temporary directory
	const c = tmp.client();
	const id = (await c.sandboxes.claim("default")).id;
	let release: () => void = () => undefined;
	const gate = new Promise<boolean>((r) => { release = () => r(true); });
	let asked!: () => void;
	const questioned = new Promise<void>((r) => { asked = r; });
	const held = c.sandboxes.waitForLifecycle(id, () => { asked(); return gate; });
	const claims = Array.from({ length: 3 }, () => c.sandboxes.claim("default").then((s) => s.status, (e: unknown) => e));
	await questioned;
	const closed = tmp.close(); // must not throw (it once hit ENOTEMPTY removing a directory in use)
	assert.ok(existsSync(tmp.path), "the directory stays while a call uses the backend");
	await assert.rejects(c.sandboxes.get(id), /closed/);
	release();
	assert.equal((await held).id, id);
	for (const r of await Promise.all(claims))
		assert.ok(r === "running" || r instanceof Error, String(r));
	await closed;
	assert.equal(existsSync(tmp.path), false, "removed once the backend closed");
	assert.equal(liveObjects(), base);
	await tmp.close(); // idempotent
	// with nothing in flight the directory goes at once
	const quick = await LocalBackend.open();
	void quick.close();
	assert.equal(existsSync(quick.path), false);
});

test("client headers must be an object of strings (a string was sent as a header named \"0\")", () => {
	const make = (o: unknown) => () => new Client(o as ClientOptions);
	assert.throws(make({ headers: "x" }), { name: "TypeError", message: /headers must be an object/ });
	assert.throws(make({ headers: ["a: b"] }), TypeError);
	assert.throws(make({ headers: { "x-a": 5 } }), { name: "TypeError", message: "header x-a must have a string value" });
	assert.throws(make(5), TypeError);
	new Client({ baseUrl: "http://127.0.0.1:9", headers: { "x-a": "b" } }).close();
});

test("an already-aborted signal sends nothing: the running sandbox is never paused", async () => {
	const own = await openLocal(); // no fault armed: a pause sent here would complete
	try {
		const c = own.client();
		const id = (await c.sandboxes.claim("default")).id;
		const ac = new AbortController();
		ac.abort(new Error("before"));
		await assert.rejects(c.sandboxes.pauseAndWait(id, { signal: ac.signal }), /before/);
		await assert.rejects(c.sandboxes.resumeAndWait(id, { signal: ac.signal }), /before/);
		await own.quiesce();
		const sb = await c.sandboxes.get(id);
		assert.equal(sb.status, "running");
		assert.equal(sb.paused, false);
		assert.equal(sb.runtimeGeneration, 1);
		// the control: the same call without the signal does pause it
		assert.equal((await c.sandboxes.pauseAndWait(id)).paused, true);
	} finally {
		await own.close();
	}
});

test("waitForLifecycle keeps its deadline while an async predicate has not answered (it hung forever)", { timeout: 10_000 }, async () => {
	const t0 = performance.now();
	const never = () => new Promise<boolean>(() => undefined);
	const err = await client.sandboxes.waitForLifecycle(free, never, { timeoutMs: 300 }).then(() => null, (e: unknown) => e);
	const ms = performance.now() - t0;
	assert.ok(err instanceof SandboxWaitTimeoutError, String(err));
	assert.equal(err.timeoutMs, 300);
	assert.equal(err.sandboxId, free);
	assert.ok(ms >= 290 && ms < 2000, `rejected after ${ms.toFixed(0)} ms`);
	// a slow predicate that answers before the deadline still ends the wait normally
	const slow = () => new Promise<boolean>((r) => setTimeout(() => r(true), 50));
	assert.equal((await client.sandboxes.waitForLifecycle(free, slow, { timeoutMs: 5_000 })).id, free);
});
