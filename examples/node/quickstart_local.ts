// Quickstart on the embedded backend (no server, no network): claim a
// sandbox, write a file, pause with memory, resume, read the file back.
//
//   npx tsc -p examples/node && node <outDir>/quickstart_local.js
import { LocalBackend, SandboxWaitTimeoutError } from "libsandbox0";

const backend = await LocalBackend.open(undefined, { manualClock: true });
try {
	const client = backend.client();
	const sandbox = await client.sandboxes.claim("default", { ttl: 600 });
	console.log(`claimed ${sandbox.id} (${sandbox.status})`);

	await client.sandbox(sandbox.id).writeFile("/workspace/notes.txt", "kept across pause\n");

	const paused = await client.sandboxes.pauseAndWait(sandbox.id, {
		memory: true,
		timeoutMs: 360_000,
		onProgress: (s, elapsedMs) => console.log(`  ${elapsedMs} ms: ${s.status}${s.paused ? " (paused)" : ""}`),
	});
	console.log(`paused at generation ${paused.runtimeGeneration}`);

	const resumed = await client.sandboxes.resumeAndWait(sandbox.id, { memory: true, timeoutMs: 360_000 });
	console.log(`resumed at generation ${resumed.runtimeGeneration}, runtime ${resumed.runtimeId}`);

	const text = Buffer.from(await client.sandbox(sandbox.id).readFile("/workspace/notes.txt")).toString();
	console.log(`file after resume: ${text.trim()}`);

	try {
		await client.sandboxes.waitForLifecycle(sandbox.id, (s) => s.status === "paused", { timeoutMs: 1_000 });
	} catch (e) {
		if (!(e instanceof SandboxWaitTimeoutError))
			throw e;
		console.log(`as expected: ${e.message} (last seen ${e.lastSandbox?.status})`);
	}
	await client.sandboxes.delete(sandbox.id);
} finally {
	backend.close();
}
