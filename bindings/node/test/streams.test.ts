// Streams (src/streams.ts over the addon's ops_stream.c) on both transports:
// a LocalBackend client (in process) and an HTTP client of `s0 serve` (a
// WebSocket). Output order, input echo, signals, session replay from a
// cursor, file watch events, an abort mid-stream, an unknown sandbox, the
// client's close() closing its streams, nothing left alive afterwards.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client, LocalBackend, NotFoundError, liveObjects } from "../src/index.js";
import type { StreamMessage } from "../src/index.js";
import { openLocal, startServer } from "./helpers.js";
import type { Server } from "./helpers.js";

async function take(it: { next(): Promise<StreamMessage | null> }, n: number): Promise<StreamMessage[]> {
	const out: StreamMessage[] = [];
	for (let i = 0; i < n; i++) {
		const m = await it.next();
		assert.ok(m, `the stream ended after ${i} of ${n} messages`);
		out.push(m);
	}
	return out;
}

function cases(name: string, open: () => Promise<{ client: Client; done: () => Promise<void> }>): void {
	describe(name, () => {
		let client: Client;
		let done: () => Promise<void>;
		before(async () => ({ client, done } = await open()));
		after(async () => done());

		test("ST-01 cmdStream: output by source in order, then the terminal done (close 1000)", async () => {
			const sb = client.sandbox((await client.sandboxes.claim("default")).id);
			const s = await sb.cmdStream("echo one; echo two >&2; echo three");
			const all: StreamMessage[] = [];
			for await (const m of s)
				all.push(m);
			assert.deepEqual(all.slice(0, 2).map((m) => [m.type, m.source, m.data]),
				[["output", "stdout", "one\nthree\n"], ["output", "stderr", "two\n"]]);
			assert.equal(all.length, 3);
			const d = await s.done;
			assert.equal(d.exitCode, 0);
			assert.equal(d.state, "stopped");
			assert.equal(s.closeCode, 1000);
			assert.equal(s.closeReason, "process exited");
		});

		test("ST-01 connectWsContext: input echo with a done per request, then a signal", async () => {
			const sb = client.sandbox((await client.sandboxes.claim("default")).id);
			const ctx = await sb.createContext({ type: "repl" });
			const s = await sb.connectWsContext(String(ctx.id));
			await s.sendInput("echo hello\n", "r1");
			await s.sendInput("echo world\n", "r2");
			assert.deepEqual((await take(s, 4)).map((m) => [m.type, m.data ?? m.requestId]),
				[["output", "hello\n"], ["done", "r1"], ["output", "world\n"], ["done", "r2"]]);
			await s.sendSignal("KILL");
			const d = await s.wait();
			assert.deepEqual([d.exitCode, d.state], [137, "killed"]);
			const rest: StreamMessage[] = [];
			for await (const m of s)
				rest.push(m);
			assert.deepEqual(rest.map((m) => [m.type, m.exitCode]), [["done", 137]]);
			assert.equal(await s.next(), null);
			await assert.rejects(s.sendInput("echo late\n"), (e: Error & { reason?: string }) => e.reason === "stream_closed");
		});

		test("ST-02 attachSession replays from a cursor", async () => {
			const sb = client.sandbox((await client.sandboxes.claim("default")).id);
			const ses = await sb.createSession({ command: ["sh", "-c", "echo a; echo b; echo c"] });
			const all = await sb.attachSession(String(ses.id));
			const seqs: number[] = [];
			for (const m of await take(all, 3))
				seqs.push(Number((m.event as { seq: number }).seq));
			all.close();
			assert.deepEqual([...seqs].sort((a, b) => a - b), seqs);
			const tail = await sb.attachSession(String(ses.id), { after: seqs[0] });
			const replay = await take(tail, 2);
			assert.deepEqual(replay.map((m) => (m.event as { seq: number }).seq), seqs.slice(1));
			tail.close();
			await assert.rejects(sb.attachSession(String(ses.id), { after: -1 }), RangeError);
		});

		test("ST-03 FS-05 watchFiles: create, write and remove events; a pause ends it with 1001", async () => {
			const sb = client.sandbox((await client.sandboxes.claim("default")).id);
			await sb.mkdir("/workspace/d");
			const w = await sb.watchFiles("/workspace/d");
			assert.ok(w.watchId);
			await sb.writeFile("/workspace/d/f", "1");
			await sb.writeFile("/workspace/other", "1");
			await sb.deleteFile("/workspace/d/f");
			const got: Array<[string | undefined, string | undefined]> = [];
			for await (const ev of w.events()) {
				got.push([ev.event, ev.path]);
				if (got.length === 3)
					break;
			}
			assert.deepEqual(got, [["create", "/workspace/d/f"], ["write", "/workspace/d/f"], ["remove", "/workspace/d/f"]]);
			await assert.rejects(w.subscribe("/workspace/none"), /watch refused/);
			await client.sandboxes.pauseAndWait(sb.id);
			assert.equal(await w.next(), null);
			assert.deepEqual([w.closeCode, w.closeReason], [1001, "sandbox paused"]);
		});

		test("an abort mid-stream rejects the pending read with its reason and closes the stream", async () => {
			const sb = client.sandbox((await client.sandboxes.claim("default")).id);
			const ctx = await sb.createContext({ type: "repl" });
			const ac = new AbortController();
			const s = await sb.connectWsContext(String(ctx.id), { signal: ac.signal });
			const pending = s.next(); // nothing comes
			const reason = new Error("stop");
			ac.abort(reason);
			await assert.rejects(pending, (e) => e === reason);
			assert.ok(s.closed);
			await assert.rejects(s.sendInput("echo x\n"), (e: Error & { reason?: string }) => e.reason === "stream_closed");
			assert.equal((await sb.getContext(String(ctx.id))).running, true, "closing only detaches");
			await assert.rejects(sb.connectWsContext(String(ctx.id), { signal: ac.signal }), (e) => e === reason);
		});

		test("ST-04 an unknown sandbox or context is NotFoundError", async () => {
			await assert.rejects(client.sandbox("sb-nope").connectWsContext("ctx-nope"), NotFoundError);
			await assert.rejects(client.sandbox("sb-nope").watchFiles("/workspace"), NotFoundError);
			const sb = client.sandbox((await client.sandboxes.claim("default")).id);
			await assert.rejects(sb.connectWsContext("ctx-nope"), (e: Error & { reason?: string }) =>
				e instanceof NotFoundError && e.reason === "context_not_found");
		});
	});
}

let base: number;
before(() => {
	base = liveObjects();
});

cases("in process (LocalBackend client)", async () => {
	const lb: LocalBackend = await openLocal();
	return { client: lb.client(), done: () => lb.close() };
});

cases("over HTTP (s0 serve, WebSocket)", async () => {
	const srv: Server = await startServer();
	const client = new Client({ baseUrl: srv.url, token: srv.token });
	return { client, done: async () => { client.close(); await srv.stop(); } };
});

test("client.close() closes its open streams; nothing stays alive", async () => {
	const lb = await openLocal();
	const c = lb.client();
	const sb = c.sandbox((await c.sandboxes.claim("default")).id);
	const w = await sb.watchFiles("/workspace");
	const pending = w.next();
	c.close();
	assert.equal(await pending, null);
	assert.ok(w.closed);
	await lb.close();
	assert.equal(liveObjects(), base, "every stream, client and backend was freed");
});
