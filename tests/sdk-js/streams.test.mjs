// The official SDK's streams against `s0 serve` (docs/wire.md §8.2):
// cmdStream and connectWsContext (output by source in order, input echo,
// done by request id, signals, the terminal done), a session attach with
// replay from a cursor (the SDK has no attach helper: its own `ws`
// dependency speaks the wire), oversized and malformed frames, many streams
// at once beside ordinary requests, a client that leaves mid-stream, and a
// stream on a paused sandbox that wakes it.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import WebSocket from "ws";

import { until, useHarness } from "./helpers.mjs";

const SB = "/api/v1/sandboxes";
const h = useHarness();

/** Everything a ContextStream yields until it ends. */
async function drain(stream) {
	const out = [];
	for await (const chunk of stream.readable)
		out.push(chunk);
	return { out, done: await stream.done };
}

/** A raw WebSocket on the server with the harness's key. */
function rawWs(path) {
	const url = h.server.url.replace(/^http/, "ws") + path;
	return new WebSocket(url, { headers: { Authorization: `Bearer ${h.server.token}` } });
}

/** Messages (parsed) of a raw socket, and its close code and reason. */
function collect(ws) {
	const msgs = [];
	const closed = new Promise((resolve) => {
		ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() }));
	});
	ws.on("message", (d) => msgs.push(JSON.parse(d.toString())));
	return { msgs, closed };
}

const opened = (ws) => new Promise((resolve, reject) => {
	ws.once("open", resolve);
	ws.once("error", reject);
	ws.once("unexpected-response", (req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
});

describe("context streams", () => {
	test("cmdStream: output by source in order, then the terminal done", async () => {
		const sb = await h.claim();
		const stream = await sb.cmdStream("sh -c 'echo one; echo two >&2; echo three; exit 3'");
		const { out, done } = await drain(stream);
		const stdout = out.filter((c) => c.source === "stdout").map((c) => c.data).join("");
		const stderr = out.filter((c) => c.source === "stderr").map((c) => c.data).join("");
		assert.equal(stdout, "one\nthree\n");
		assert.equal(stderr, "two\n");
		assert.equal(done.exitCode, 3);
		assert.equal(done.state, "stopped");
		assert.equal(done.contextId, stream.id);
	});

	test("connectWsContext on a REPL: input echo, done per request, signals", async () => {
		const sb = await h.claim();
		const ctx = await sb.createContext({ type: "repl", repl: { alias: "bash" } });
		const stream = await sb.connectWsContext(ctx.id);
		const seen = [];
		const reader = stream.readable.getReader();
		const raw = stream.socket;
		const dones = [];
		raw.onMessage((d) => {
			const m = JSON.parse(d.toString());
			if (m.type === "done")
				dones.push(m);
		});
		await raw.waitForOpen();
		stream.sendInput("echo hello\n", "req-1");
		stream.sendInput("echo world\n", "req-2");
		for (;;) {
			const { value } = await reader.read();
			seen.push(value.data);
			if (seen.join("").includes("world\n"))
				break;
		}
		assert.equal(seen.join(""), "hello\nworld\n");
		await until("both done messages", 10_000, () => dones.length >= 2);
		assert.deepEqual(dones.map((d) => d.request_id), ["req-1", "req-2"]);
		/* a signal ends the REPL: the terminal done closes the stream */
		stream.sendSignal("KILL");
		for (;;) {
			const { done } = await reader.read();
			if (done)
				break;
		}
		const end = await stream.done;
		assert.equal(end.state, "killed");
		assert.equal(end.exitCode, 137);
	});

	test("a context stream is 404 for an unknown context, before any upgrade", async () => {
		const sb = await h.claim();
		const ws = rawWs(`${SB}/${sb.id}/contexts/ctx-nope/ws`);
		const c = collect(ws);
		await assert.rejects(opened(ws), /HTTP 404/);
		ws.terminate();
		await c.closed;
		const r = await h.raw("GET", `${SB}/${sb.id}/contexts/ctx-nope/ws`);
		assert.equal(r.status, 426);
		const other = rawWs(`${SB}/${sb.id}/contexts/ctx-nope/ws`.replace(sb.id, "sb-nope"));
		await assert.rejects(opened(other), /HTTP 404/);
		other.terminate();
	});

	test("oversized and malformed messages close with a clear code; others go on", async () => {
		const sb = await h.claim();
		const ctx = await sb.createContext({ type: "repl", repl: { alias: "bash" } });
		const big = rawWs(`${SB}/${sb.id}/contexts/${ctx.id}/ws`);
		const bigc = collect(big);
		await opened(big);
		const ok = rawWs(`${SB}/${sb.id}/contexts/${ctx.id}/ws`);
		const okc = collect(ok);
		await opened(ok);
		big.send("x".repeat(70 * 1024));
		assert.equal((await bigc.closed).code, 1009);
		const bad = rawWs(`${SB}/${sb.id}/contexts/${ctx.id}/ws`);
		const badc = collect(bad);
		await opened(bad);
		bad.send("not json");
		const c = await badc.closed;
		assert.equal(c.code, 1007);
		assert.match(c.reason, /JSON object/);
		const bin = rawWs(`${SB}/${sb.id}/contexts/${ctx.id}/ws`);
		const binc = collect(bin);
		await opened(bin);
		bin.send(Buffer.from([1, 2, 3]));
		assert.equal((await binc.closed).code, 1003);
		/* the other stream on the same context is unaffected */
		ok.send(JSON.stringify({ type: "input", data: "echo still\n", request_id: "r" }));
		await until("the other stream's answer", 10_000,
			() => okc.msgs.some((m) => m.type === "done" && m.request_id === "r"));
		assert.ok(okc.msgs.some((m) => m.type === "output" && m.data === "still\n"));
		ok.close();
		await okc.closed;
	});

	test("a pause ends the stream with 1001; a stream on a paused sandbox wakes it", async () => {
		const sb = await h.claim();
		const ctx = await sb.createContext({ type: "repl", repl: { alias: "bash" } });
		const ws = rawWs(`${SB}/${sb.id}/contexts/${ctx.id}/ws`);
		const c = collect(ws);
		await opened(ws);
		await h.sdk.sandboxes.pauseAndWait(sb.id, { timeoutMs: 30_000, pollIntervalMs: 20 });
		const closed = await c.closed;
		assert.equal(closed.code, 1001);
		assert.equal(closed.reason, "sandbox paused");
		/* the context is gone with the filesystem-only pause; a new one after the wake */
		assert.equal((await h.state(sb.id)).paused, true);
		const again = rawWs(`${SB}/${sb.id}/sessions/none/ws`);
		const ac = collect(again);
		await assert.rejects(opened(again), /HTTP 404/);
		again.terminate();
		await ac.closed;
		assert.equal((await h.state(sb.id)).status, "running", "the open woke the sandbox");
	});

	test("100 streams at once beside ordinary requests; one leaves mid-stream", async () => {
		const sb = await h.claim();
		const ctx = await sb.createContext({ type: "repl", repl: { alias: "bash" } });
		const n = 100;
		const socks = [];
		for (let i = 0; i < n; i++) {
			const ws = rawWs(`${SB}/${sb.id}/contexts/${ctx.id}/ws`);
			socks.push({ ws, c: collect(ws) });
		}
		await Promise.all(socks.map((s) => opened(s.ws)));
		const t0 = Date.now();
		const health = await fetch(`${h.server.url}/healthz`);
		assert.equal(health.status, 200);
		assert.equal((await h.state(sb.id)).status, "running");
		assert.ok(Date.now() - t0 < 2000, `ordinary requests took ${Date.now() - t0} ms`);
		socks[0].ws.terminate(); /* gone without a close frame */
		for (let i = 1; i < n; i++)
			socks[i].ws.send(JSON.stringify({ type: "input", data: `echo n${i}\n`, request_id: `q${i}` }));
		await until("every stream's done", 30_000, () => socks.slice(1).every((s, k) =>
			s.c.msgs.some((m) => m.type === "done" && m.request_id === `q${k + 1}`)));
		/* one context: every stream sees its output, each its own input's among it */
		for (let i = 1; i < n; i++) {
			const text = socks[i].c.msgs.filter((m) => m.type === "output").map((m) => m.data).join("");
			assert.ok(text.includes(`n${i}\n`), `stream ${i}: ${text.slice(0, 80)}`);
		}
		for (const s of socks.slice(1))
			s.ws.close();
		await Promise.all(socks.slice(1).map((s) => s.c.closed));
	});
});

describe("slow reader", () => {
	test("readers that lag hold the server's memory to a bound; nothing is lost", async () => {
		const sb = await h.claim();
		const lines = [];
		for (let i = 0; i < 131071; i++)
			lines.push(String(i).padStart(7, "0"));
		const text = lines.join("\n") + "\n"; /* 1 MiB - 8 bytes: all of it fits the pipe */
		await sb.writeFile("/workspace/big.txt", text);
		const ctx = await sb.createContext({ type: "cmd", waitUntilDone: true,
			cmd: { command: ["sh", "-c", "cat /workspace/big.txt; cat /workspace/big.txt >&2"] } });
		assert.equal(ctx.exitCode, 0);
		const rss = async () => {
			const st = await readFile(`/proc/${h.server.child.pid}/status`, "utf8");
			return Number(/VmRSS:\s+(\d+)/.exec(st)[1]) * 1024;
		};
		/* 40 readers of the same 2 MiB (1 on stdout, 1 on stderr): buffering it for
		 * them would cost 80+ MiB; the bounded queues cost about 2 x 64 KiB each */
		const n = 40;
		const readers = [];
		const before = await rss();
		for (let i = 0; i < n; i++) {
			const ws = rawWs(`${SB}/${sb.id}/contexts/${ctx.id}/ws`);
			const r = { ws, chunks: [], errs: [], got: 0, done: null };
			ws.on("message", (d) => {
				const m = JSON.parse(d.toString());
				if (m.type === "output") {
					(m.source === "stdout" ? r.chunks : r.errs).push(m.data);
					r.got += m.data.length;
				} else if (m.type === "done")
					r.done = m;
			});
			ws.on("upgrade", (res) => res.socket.pause()); /* lag from the first byte */
			ws.on("close", (code) => { r.closed = code; });
			readers.push(r);
		}
		await Promise.all(readers.map((r) => opened(r.ws)));
		let peak = before;
		for (let i = 0; i < 20; i++) {
			peak = Math.max(peak, await rss());
			await delay(100);
		}
		assert.ok(peak - before < 32 * 1024 * 1024,
			`server RSS grew ${((peak - before) / 1048576).toFixed(1)} MiB for ${n} lagging readers`);
		for (const r of readers)
			r.ws._socket.resume();
		await until("every reader's whole output", 60_000, () => readers.every((r) => r.done))
			.catch((e) => {
				throw new Error(`${e.message}: ${readers.map((r) => `${r.got}${r.done ? "d" : ""}/${r.closed}`).join(" ")}`);
			});
		for (const r of readers) {
			assert.equal(r.got, 2 * text.length);
			assert.equal(r.chunks.join(""), text, "stdout in order, nothing lost");
			assert.equal(r.errs.join(""), text, "stderr in order, nothing lost");
			assert.equal(r.done.exit_code, 0);
		}
	});
});

describe("session attach", () => {
	test("replay from a cursor, then live events; input acked", async () => {
		const sb = await h.claim();
		const create = await h.raw("POST", `${SB}/${sb.id}/sessions`, {
			body: { command: ["sh", "-c", "echo first; read x; echo got $x"] },
		});
		assert.equal(create.status, 201, create.text);
		const sid = create.json.data.id;
		const page = await until("the first output event", 10_000, async () => {
			const r = await h.raw("GET", `${SB}/${sb.id}/sessions/${sid}/events?after=0`);
			return r.json.data.events.some((e) => e.type === "output") ? r.json.data : null;
		});
		const firstSeq = page.events[0].seq;
		/* attach after the first event: everything after it, nothing before */
		const ws = rawWs(`${SB}/${sb.id}/sessions/${sid}/ws?after=${firstSeq}`);
		const c = collect(ws);
		await opened(ws);
		await until("the replay", 10_000, () => c.msgs.length >= page.events.length - 1);
		const replayed = c.msgs.filter((m) => m.type === "event").map((m) => m.event.seq);
		assert.deepEqual(replayed, page.events.slice(1).map((e) => e.seq));
		const attempt = create.json.data.attempt?.id;
		ws.send(JSON.stringify({
			type: "input", input_id: "in-1", data_base64: Buffer.from("sky\n").toString("base64"),
			request_id: "a1", ...(attempt ? { expected_attempt_id: attempt } : {}),
		}));
		await until("the ack and the live output", 10_000, () =>
			c.msgs.some((m) => m.type === "ack" && m.request_id === "a1") &&
			c.msgs.some((m) => m.type === "event" &&
				/got sky/.test(Buffer.from(m.event.data_base64 ?? "", "base64").toString())));
		const seqs = c.msgs.filter((m) => m.type === "event").map((m) => m.event.seq);
		assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), "events in order");
		assert.equal(new Set(seqs).size, seqs.length, "no event twice");
		ws.close();
		await c.closed;
	});
});

describe("file watch", () => {
	test("watchFiles: create, write, rename, remove from the API and the guest", async () => {
		const sb = await h.claim();
		await sb.mkdir("/workspace/w", true);
		const watcher = await sb.watchFiles("/workspace/w");
		assert.match(watcher.watchId, /^w\d+$/);
		const events = [];
		const reader = watcher.readable.getReader();
		const pump = (async () => {
			for (;;) {
				const { value, done } = await reader.read();
				if (done)
					return;
				events.push(value);
			}
		})();
		await sb.writeFile("/workspace/w/a.txt", "one");
		await sb.writeFile("/workspace/w/a.txt", "two");
		await sb.moveFile("/workspace/w/a.txt", "/workspace/w/b.txt");
		await sb.deleteFile("/workspace/w/b.txt");
		await sb.writeFile("/workspace/elsewhere.txt", "not watched");
		await sb.cmd("sh -c 'echo guest > /workspace/w/g.txt'");
		await until("the guest's write", 10_000, () => events.some((e) => e.path === "/workspace/w/g.txt"));
		const seen = events.map((e) => `${e.event} ${e.path}`);
		assert.deepEqual(seen.slice(0, 6), [
			"create /workspace/w/a.txt", "write /workspace/w/a.txt", "write /workspace/w/a.txt",
			"rename /workspace/w/a.txt", "create /workspace/w/b.txt", "remove /workspace/w/b.txt",
		]);
		assert.ok(seen.includes("create /workspace/w/g.txt"), seen.join(", "));
		assert.ok(!seen.some((s) => s.includes("elsewhere")));
		assert.ok(events.every((e) => e.type === "event" && e.watchId === watcher.watchId));
		watcher.unsubscribe(watcher.watchId);
		await pump;
	});

	test("a path that does not exist is refused; a pause ends the watch, resubscribe after", async () => {
		const sb = await h.claim();
		await assert.rejects(sb.watchFiles("/workspace/nope"), (e) => e.code === "watch_failed");
		const ws = rawWs(`${SB}/${sb.id}/files/watch`);
		const c = collect(ws);
		await opened(ws);
		ws.send(JSON.stringify({ action: "subscribe", path: "/workspace", recursive: true }));
		await until("subscribed", 10_000, () => c.msgs.some((m) => m.type === "subscribed"));
		await sb.writeFile("/workspace/deep/x.txt", "x").catch(async () => {
			await sb.mkdir("/workspace/deep", true);
			await sb.writeFile("/workspace/deep/x.txt", "x");
		});
		await until("a recursive event", 10_000,
			() => c.msgs.some((m) => m.type === "event" && m.path === "/workspace/deep/x.txt"));
		await h.sdk.sandboxes.pauseAndWait(sb.id, { timeoutMs: 30_000, pollIntervalMs: 20 });
		const closed = await c.closed;
		assert.equal(closed.code, 1001);
		assert.equal(closed.reason, "sandbox paused");
		/* a new watch wakes the sandbox (auto_resume) and sees the restored tree */
		const again = await sb.watchFiles("/workspace/deep");
		assert.equal((await h.state(sb.id)).status, "running");
		const reader = again.readable.getReader();
		await sb.writeFile("/workspace/deep/y.txt", "y");
		const first = await reader.read();
		assert.equal(first.value.event, "create");
		assert.equal(first.value.path, "/workspace/deep/y.txt");
		again.unsubscribe(again.watchId);
	});
});
