/**
 * Test harness: `s0 serve` on a fresh data directory (killed on every
 * path), a recording proxy in front of it (request log, injected answers,
 * dropped replies), and embedded backends.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";

import { Client, LocalBackend } from "../src/index.js";
import type { LocalBackendOptions } from "../src/index.js";

/** The repository root (tests run from bindings/node/dist/test). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
/** The package directory (bindings/node). */
export const PKG = resolve(REPO, "bindings", "node");
/** The s0 executable. */
export const S0_BIN = process.env.S0_BIN ?? join(REPO, "build", "libsandbox0", "cli", "s0");

/** Poll @p probe until truthy or @p budgetMs passes (for external processes only). */
export async function until<T>(what: string, budgetMs: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
	const deadline = Date.now() + budgetMs;
	for (;;) {
		const v = await probe();
		if (v)
			return v;
		if (Date.now() >= deadline)
			throw new Error(`timed out after ${budgetMs} ms waiting for ${what}`);
		await delay(20);
	}
}

/** A running `s0 serve`. */
export interface Server {
	url: string;
	token: string;
	/** An authenticated plain-fetch call (admin endpoints). */
	admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
	stop(): Promise<void>;
}

/** Start `s0 serve` on a fresh directory, listening on an ephemeral loopback port. */
export async function startServer(extra: string[] = []): Promise<Server> {
	const root = await mkdtemp(join(tmpdir(), "s0-node-test-"));
	const data = join(root, "data");
	const token = `s0_nodetest${randomBytes(12).toString("hex")}`;
	const child = spawn(S0_BIN, ["serve", "--data", data, "--listen", "127.0.0.1:0", "--token", token, "--quiet", "--runtime", "sim", ...extra],
		{ stdio: ["ignore", "ignore", "pipe"] });
	let log = "";
	child.stderr.on("data", (b: Buffer) => { log += b.toString(); });
	let exited: { code: number | null; signal: string | null } | null = null;
	const orphan = () => { child.kill("SIGKILL"); };
	process.on("exit", orphan);
	const exit = new Promise<void>((res) => child.on("exit", (code, signal) => {
		exited = { code, signal };
		process.off("exit", orphan);
		res();
	}));
	const stop = async () => {
		if (!exited) {
			child.kill("SIGTERM");
			const t = setTimeout(() => child.kill("SIGKILL"), 15_000);
			await exit;
			clearTimeout(t);
		}
		await rm(root, { recursive: true, force: true });
	};
	try {
		const info = await until("server.json", 30_000, async () => {
			if (exited)
				throw new Error(`s0 serve exited early (${JSON.stringify(exited)}): ${log}`);
			try {
				const j = JSON.parse(await readFile(join(data, "server.json"), "utf8")) as { url: string; pid: number };
				return j.pid === child.pid ? j : null;
			} catch {
				return null;
			}
		});
		const admin = async (method: string, path: string, body?: unknown) => {
			const r = await fetch(info.url + path, {
				method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
				body: body === undefined ? undefined : JSON.stringify(body),
			});
			const text = await r.text();
			return { status: r.status, json: text ? JSON.parse(text) as unknown : null };
		};
		return { url: info.url, token, admin, stop };
	} catch (e) {
		await stop();
		throw e;
	}
}

/** One request the proxy saw. */
export interface Recorded {
	method: string;
	path: string;
	body: string;
	headers: http.IncomingHttpHeaders;
}

/** A rule of the proxy: answer instead of the server, or drop the server's reply. */
export interface Rule {
	match: (r: Recorded) => boolean;
	/** Answer with this instead of forwarding. */
	respond?: { status: number; headers?: Record<string, string>; body?: string };
	/** Forward, then close the connection instead of relaying the reply. */
	dropReply?: boolean;
	/** How many requests the rule applies to (default 1). */
	times?: number;
}

/** A recording proxy in front of a server. */
export interface Proxy {
	url: string;
	log: Recorded[];
	rules: Rule[];
	/** Requests matching method and a path suffix/regexp. */
	requests(method: string, path: RegExp): Recorded[];
	close(): Promise<void>;
}

export async function startProxy(upstream: string): Promise<Proxy> {
	const up = new URL(upstream);
	const log: Recorded[] = [];
	const rules: Rule[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on("data", (c: Buffer) => chunks.push(c));
		req.on("end", () => {
			const rec: Recorded = { method: req.method ?? "", path: req.url ?? "", body: Buffer.concat(chunks).toString(), headers: req.headers };
			log.push(rec);
			const i = rules.findIndex((r) => r.match(rec));
			const rule = i >= 0 ? rules[i] : undefined;
			if (rule) {
				rule.times = (rule.times ?? 1) - 1;
				if (rule.times <= 0)
					rules.splice(i, 1);
			}
			if (rule?.respond) {
				res.writeHead(rule.respond.status, rule.respond.headers ?? {});
				res.end(rule.respond.body ?? "");
				return;
			}
			const fwd = http.request({
				host: up.hostname, port: up.port, method: req.method, path: req.url,
				headers: { ...req.headers, host: up.host },
			}, (ures) => {
				const uchunks: Buffer[] = [];
				ures.on("data", (c: Buffer) => uchunks.push(c));
				ures.on("end", () => {
					if (rule?.dropReply) {
						req.socket.destroy();
						return;
					}
					res.writeHead(ures.statusCode ?? 502, ures.headers);
					res.end(Buffer.concat(uchunks));
				});
			});
			fwd.on("error", () => req.socket.destroy());
			fwd.end(Buffer.concat(chunks));
		});
	});
	server.keepAliveTimeout = 1000;
	await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
	const port = (server.address() as AddressInfo).port;
	return {
		url: `http://127.0.0.1:${port}`, log, rules,
		requests: (method, path) => log.filter((r) => r.method === method && path.test(r.path)),
		close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
	};
}

/** A server with a proxy and a client through the proxy. */
export interface Remote {
	server: Server;
	proxy: Proxy;
	client: Client;
	stop(): Promise<void>;
}

export async function startRemote(extra: string[] = ["--enable-admin"]): Promise<Remote> {
	const server = await startServer(extra);
	let proxy: Proxy | undefined;
	try {
		proxy = await startProxy(server.url);
		const client = new Client({ token: server.token, baseUrl: proxy.url });
		const p = proxy;
		return {
			server, proxy, client,
			stop: async () => {
				client.close();
				await p.close();
				await server.stop();
			},
		};
	} catch (e) {
		await proxy?.close();
		await server.stop();
		throw e;
	}
}

/** Arm a fault through the admin endpoint of a server started with --enable-admin. */
export async function armServerFault(s: Server, name: string, mode = "fail", count = 0): Promise<void> {
	const r = await s.admin("POST", "/admin/v1/faults", { name, mode, count });
	assert.ok(r.status < 300, `arming ${name}: ${r.status} ${JSON.stringify(r.json)}`);
}

export async function releaseServerFault(s: Server, name: string): Promise<void> {
	const r = await s.admin("DELETE", `/admin/v1/faults?name=${encodeURIComponent(name)}`);
	assert.ok(r.status < 300, `releasing ${name}: ${r.status}`);
}

/** An embedded backend on a temporary directory (removed by close()). */
export async function openLocal(options: LocalBackendOptions = {}): Promise<LocalBackend> {
	return LocalBackend.open(undefined, options);
}
