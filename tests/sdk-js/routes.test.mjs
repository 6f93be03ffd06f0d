// Public routes and the session event stream through the official SDK
// against `s0 serve` (docs/wire.md "Public routes", §8.4): getServices,
// updateServices and clearServices; the public URL answering GET and POST
// from the sandbox's httpd; a paused sandbox woken by inbound HTTP at the
// same URL; watchSessionEvents replaying from a cursor and from
// Last-Event-ID, ending when the sandbox pauses (PUB-10, SSE-04).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { useHarness } from "./helpers.mjs";

const h = useHarness();

const web = (routes) => [{
	id: "web",
	port: 8080,
	runtime: { type: "cmd", command: ["httpd", "-p", "8080", "-h", "/www"] },
	ingress: { _public: true, routes },
}];

describe("public routes", () => {
	test("services CRUD, proxy GET/POST, wake by inbound HTTP at a stable URL", async () => {
		const sb = await h.claim();
		await sb.writeFile("/www/index.html", "hello from the sandbox");
		const none = await sb.getServices();
		assert.deepEqual(none, { sandboxId: sb.id, services: [] });
		const put = await sb.updateServices(web([{ id: "all", pathPrefix: "/", resume: true }]));
		assert.equal(put.services.length, 1);
		const view = put.services[0];
		assert.equal(view.id, "web");
		assert.equal(view.publishable, true);
		assert.deepEqual(view.publishBlockers, []);
		assert.equal(view.ingress.routes[0].resume, true);
		assert.match(view.publicUrl, /^http:\/\/127\.0\.0\.1:\d+\/r\/[a-z0-9]+\/$/);
		const url = view.publicUrl;
		assert.equal((await sb.getServices()).services[0].publicUrl, url);

		let res = await fetch(url);
		assert.equal(res.status, 200);
		assert.equal(await res.text(), "hello from the sandbox");
		res = await fetch(url + "echo", { method: "POST", body: "payload", headers: { "Content-Type": "text/plain" } });
		assert.equal(res.status, 200);
		assert.equal(res.headers.get("x-sim-method"), "POST");
		assert.equal(await res.text(), "payload");

		const before = await h.state(sb.id);
		await h.sdk.sandboxes.pauseAndWait(sb.id);
		res = await fetch(url);
		assert.equal(res.status, 200);
		assert.equal(await res.text(), "hello from the sandbox");
		const after = await h.state(sb.id);
		assert.equal(after.status, "running");
		assert.ok(after.runtime_generation > before.runtime_generation);
		assert.equal((await sb.getServices()).services[0].publicUrl, url);

		const cleared = await sb.clearServices();
		assert.deepEqual(cleared.services, []);
		assert.equal((await fetch(url)).status, 404);
	});

	test("a resume route needs a restartable runtime: the SDK sees the 400", async () => {
		const sb = await h.claim();
		await assert.rejects(
			sb.updateServices([{ id: "m", port: 9000, runtime: { type: "manual" },
				ingress: { _public: true, routes: [{ id: "r", resume: true }] } }]),
			(e) => e.name === "APIError" && e.statusCode === 400 && /restartable/.test(e.message));
	});
});

describe("session event stream", () => {
	test("watchSessionEvents replays from after and Last-Event-ID and ends at pause", async () => {
		const sb = await h.claim();
		const ses = await sb.createSession({ command: ["sh", "-c", "echo one; echo two"] });
		const fromAfter = await sb.watchSessionEvents(ses.id, { after: 3 });
		const fromLast = await sb.watchSessionEvents(ses.id, { lastEventId: "5" });
		/* read each up to event 6, then pause: both streams end */
		const upTo6 = async (stream) => {
			const it = stream[Symbol.asyncIterator]();
			const seqs = [];
			while (seqs.at(-1) !== 6) {
				const { value, done } = await it.next();
				assert.equal(done, false);
				seqs.push(value.seq);
			}
			return { seqs, it };
		};
		const a = await upTo6(fromAfter), b = await upTo6(fromLast);
		assert.deepEqual(a.seqs, [4, 5, 6]);
		assert.deepEqual(b.seqs, [6]);
		await h.sdk.sandboxes.pauseAndWait(sb.id);
		assert.equal((await a.it.next()).done, true);
		assert.equal((await b.it.next()).done, true);
	});
});
