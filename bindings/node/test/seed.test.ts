// The product document's TypeScript snippet (MEM-01..MEM-13), verbatim, against s0 serve and
// against the embedded backend
// (CL-15). Only the import differs from the official package.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, liveObjects } from "../src/index.js";
import type { SandboxModel } from "../src/index.js";
import { openLocal, startRemote } from "./helpers.js";
import type { Remote } from "./helpers.js";

async function seedSnippet(client: Client, sandbox: SandboxModel): Promise<void> {
	// ---- verbatim from CL-15 ----
await client.sandboxes.pauseAndWait(sandbox.id, {
memory: true,
timeoutMs: 360_000,
});
await client.sandboxes.resumeAndWait(sandbox.id, {
memory: true,
timeoutMs: 360_000,
});
	// ---- end of CL-15's snippet ----
}

let remote: Remote;
before(async () => { remote = await startRemote(); });
after(async () => { await remote?.stop(); });

test("CL-15 seed snippet against s0 serve: memory pause and resume, one POST each with {memory:true}", async () => {
	const client = remote.client;
	const sandbox = await client.sandboxes.claim("default");
	const before = await client.sandboxes.get(sandbox.id);
	remote.proxy.log.length = 0;
	await seedSnippet(client, sandbox);
	const after = await client.sandboxes.get(sandbox.id);
	assert.equal(after.status, "running");
	assert.equal(after.paused, false);
	assert.equal(after.id, before.id);
	assert.ok((after.runtimeGeneration ?? 0) > (before.runtimeGeneration ?? 0), "runtime_generation advanced");
	assert.notEqual(after.runtimeId, before.runtimeId, "runtime_id changed");
	const pauses = remote.proxy.requests("POST", /\/pause$/);
	const resumes = remote.proxy.requests("POST", /\/resume$/);
	assert.deepEqual(pauses.map((r) => JSON.parse(r.body)), [{ memory: true }]);
	assert.deepEqual(resumes.map((r) => JSON.parse(r.body)), [{ memory: true }]);
	await client.sandboxes.delete(sandbox.id);
});

test("CL-15 seed snippet against the embedded backend: a REPL's variable survives (memory image restored)", async () => {
	const base = liveObjects();
	const lb = await openLocal({ manualClock: true });
	try {
		const client = lb.client();
		const sandbox = await client.sandboxes.claim("default");
		const h = client.sandbox(sandbox.id);
		const ctx = await h.createContext({ type: "repl" });
		const ctxId = ctx.id as string;
		await h.contextExec(ctxId, "GREETING=hello");
		await seedSnippet(client, sandbox);
		const got = await client.sandboxes.get(sandbox.id);
		assert.equal(got.status, "running");
		assert.equal(got.runtimeGeneration, 2);
		// the context (a process) is still there after a memory resume
		const again = await h.getContext(ctxId);
		assert.equal(again.id, ctxId);
		// and so does its memory: the shell variable set before the pause
		const out = await h.contextExec(ctxId, "echo $GREETING");
		assert.equal(String(out.stdout).trim(), "hello");
	} finally {
		lb.close();
	}
	assert.equal(liveObjects(), base);
});
