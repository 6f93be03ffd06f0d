// The UCloud/E2B-style facade (UC-01..UC-16) on the embedded backend.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { InvalidArgumentError, NotFoundError, Sandbox, SandboxLifecycleFailedError, claimConfig, setDefaultClient } from "../src/index.js";
import type { Client, LocalBackend } from "../src/index.js";
import { openLocal } from "./helpers.js";

let lb: LocalBackend;
let client: Client;
before(async () => {
	lb = await openLocal({ manualClock: true });
	client = lb.client();
	setDefaultClient(client);
});
after(() => {
	setDefaultClient(undefined);
	lb.close();
});

test("claimConfig: kill mode by default, pause mode on request, bad input refused", () => {
	assert.deepEqual(claimConfig(), { ttl: 0, hardTtl: 300, autoResume: false });
	assert.deepEqual(claimConfig(60, { onTimeout: "pause", autoResume: true }), { ttl: 60, hardTtl: 0, autoResume: true });
	assert.throws(() => claimConfig(-1), InvalidArgumentError);
	assert.throws(() => claimConfig(10, { onTimeout: "explode" as "kill" }), InvalidArgumentError);
	assert.throws(() => claimConfig(10, { bogus: 1 } as never), InvalidArgumentError);
});

test("create, memory pause, connect, kill (kill-on-timeout keeps a paused sandbox until killed)", async () => {
	const sbx = await Sandbox.create({ timeout: 120, envs: { A: "1" } });
	let info = await sbx.getInfo();
	assert.equal(info.state, "running");
	assert.ok(info.sandbox.hardExpiresAt instanceof Date);
	assert.equal(info.sandbox.expiresAt, undefined);
	await sbx.files.write("/workspace/x", "1");
	assert.equal(await sbx.pause(), sbx.sandboxId);
	info = await sbx.getInfo();
	assert.equal(info.state, "paused");
	assert.equal(info.sandbox.hardExpiresAt, undefined, "hard deadline cleared while paused");
	const same = await Sandbox.connect(sbx.sandboxId, { timeout: 60 });
	info = await same.getInfo();
	assert.equal(info.state, "running");
	assert.ok(info.sandbox.hardExpiresAt instanceof Date, "hard deadline re-armed");
	assert.equal(await same.files.read("/workspace/x"), "1");
	assert.equal(await same.files.exists("/workspace/nope"), false);
	await same.kill();
	assert.equal(await sbx.state(), "killed");
	await assert.rejects(Sandbox.kill(sbx.sandboxId), NotFoundError);
});

test("pause-on-timeout: the timeout pauses; connect resumes and re-arms", async () => {
	const sbx = await Sandbox.create({ timeout: 30, lifecycle: { onTimeout: "pause" } });
	await lb.advanceClock(31_000);
	await lb.quiesce();
	await client.sandboxes.waitForLifecycle(sbx.sandboxId, (s) => s.paused, { timeoutMs: 10_000 });
	assert.equal(await sbx.state(), "paused");
	await Sandbox.connect(sbx.sandboxId);
	assert.equal(await sbx.isRunning(), true);
	await sbx.kill();
});

test("a failed memory capture raises and never falls back to a filesystem pause", async () => {
	const sbx = await Sandbox.create();
	lb.armFault("capture@after-authorize", { count: 1 });
	try {
		await assert.rejects(sbx.pause(), SandboxLifecycleFailedError);
	} finally {
		lb.releaseFault("capture@after-authorize");
	}
	await sbx.kill();
});

test("list: a paginator over states, pages of `limit`, no duplicates", async () => {
	const made = [await Sandbox.create(), await Sandbox.create(), await Sandbox.create()];
	await made[0].pause();
	const pages: string[][] = [];
	const p = Sandbox.list({ state: ["running", "paused"] }, 1);
	while (p.hasNext) {
		const items = await p.nextItems();
		if (items.length)
			pages.push(items.map((i) => i.sandboxId));
	}
	const all = pages.flat();
	assert.ok(pages.every((pg) => pg.length === 1));
	assert.equal(new Set(all).size, all.length);
	for (const s of made)
		assert.ok(all.includes(s.sandboxId));
	const paused: string[] = [];
	for await (const i of Sandbox.list({ state: ["paused"] }))
		paused.push(i.sandboxId);
	assert.deepEqual(paused, [made[0].sandboxId]);
	assert.throws(() => Sandbox.list(undefined, 0), InvalidArgumentError);
	for (const s of made)
		await s.kill();
});
