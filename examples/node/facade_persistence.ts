// The UCloud/E2B-style facade on the embedded backend: create a sandbox that
// pauses on timeout, pause it with memory, reconnect by id, kill it.
import { LocalBackend, NotFoundError, Sandbox, setDefaultClient } from "libsandbox0";

const backend = await LocalBackend.open(undefined, { manualClock: true });
setDefaultClient(backend.client());
try {
	const sbx = await Sandbox.create({ timeout: 600, lifecycle: { onTimeout: "pause" } });
	await sbx.files.write("/workspace/state.json", JSON.stringify({ step: 1 }));
	console.log(`created ${sbx.sandboxId}: ${await sbx.state()}`);

	await sbx.pause();
	console.log(`after pause: ${await sbx.state()}`);

	const same = await Sandbox.connect(sbx.sandboxId, { timeout: 60 });
	console.log(`after connect: ${await same.state()}, state.json = ${await same.files.read("/workspace/state.json")}`);

	for await (const info of Sandbox.list({ state: ["running"] }))
		console.log(`listed ${info.sandboxId} ${info.state} until ${info.endAt?.toISOString()}`);

	await same.kill();
	try {
		await Sandbox.kill(sbx.sandboxId);
	} catch (e) {
		if (!(e instanceof NotFoundError))
			throw e;
		console.log(`killed: ${await sbx.state()}`);
	}
} finally {
	setDefaultClient(undefined);
	backend.close();
}
