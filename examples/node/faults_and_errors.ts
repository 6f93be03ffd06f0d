// Errors as classes: a failed memory capture (armed fault) is a
// SandboxLifecycleFailedError and never a silent filesystem pause; an
// aborted wait rejects with the signal's reason.
import { APIError, LocalBackend, SandboxLifecycleFailedError } from "libsandbox0";

const backend = await LocalBackend.open(undefined, { manualClock: true });
try {
	const client = backend.client();
	const { id } = await client.sandboxes.claim("default");

	backend.armFault("capture@after-authorize", { count: 1 });
	try {
		await client.sandboxes.pauseAndWait(id, { memory: true });
	} catch (e) {
		if (!(e instanceof SandboxLifecycleFailedError))
			throw e;
		console.log(`${e.name}: ${e.action} of ${e.sandboxId}; last seen ${e.lastSandbox?.status}, paused=${e.lastSandbox?.paused}`);
	} finally {
		backend.releaseFault("capture@after-authorize");
	}
	const back = await client.sandboxes.resumeAndWait(id, { memory: true });
	console.log(`recovered from the committed RootFS: ${back.status}`);

	try {
		await client.sandboxes.get("sb_does_not_exist");
	} catch (e) {
		if (!(e instanceof APIError))
			throw e;
		console.log(`${e.name} ${e.statusCode} ${e.code}: ${e.message}`);
	}

	const ac = new AbortController();
	const waiting = client.sandboxes.waitForLifecycle(id, () => false, { signal: ac.signal, timeoutMs: Infinity });
	ac.abort(new Error("user pressed stop"));
	await waiting.catch((e: unknown) => console.log(`aborted: ${(e as Error).message}`));
	await client.sandboxes.delete(id);
} finally {
	backend.close();
}
