// Shared harness for the sdk-js suites: one `s0 serve` per test file on a
// fresh data directory, the official SDK client, a recorder of every
// response the SDK sees, and plain-fetch access to the server state.
import assert from "node:assert/strict";
import { after, afterEach, before } from "node:test";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";

import { Client } from "sandbox0";

export const STATUSES = ["starting", "running", "paused", "terminating", "failed"];
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
const START_BUDGET_MS = 30_000;
const STOP_BUDGET_MS = 15_000;

/** Poll `probe` every `stepMs` until it returns a truthy value or `budgetMs` passes. */
export async function until(what, budgetMs, probe, stepMs = 20) {
	const deadline = Date.now() + budgetMs;
	for (;;) {
		const v = await probe();
		if (v)
			return v;
		if (Date.now() >= deadline)
			throw new Error(`timed out after ${budgetMs} ms waiting for ${what}`);
		await delay(Math.min(stepMs, Math.max(1, deadline - Date.now())));
	}
}

/**
 * Start `$S0_BIN serve` on a fresh temporary data directory, listening on
 * 127.0.0.1 port 0 with a known API key; resolves once server.json names
 * this process and /healthz answers.
 */
export async function startServer(extraArgs = []) {
	const bin = process.env.S0_BIN;
	assert.ok(bin, "S0_BIN must name the s0 executable");
	const root = await mkdtemp(join(tmpdir(), "s0-sdk-js-"));
	const data = join(root, "data");
	const token = `s0_sdkjs${randomBytes(12).toString("hex")}`;
	const child = spawn(bin, ["serve", "--data", data, "--listen", "127.0.0.1:0", "--token", token,
		"--quiet", "--runtime", "sim", ...extraArgs], { stdio: ["ignore", "pipe", "pipe"] });
	let log = "";
	child.stdout.on("data", (b) => { log += b; });
	child.stderr.on("data", (b) => { log += b; });
	let exited = null;
	const orphan = () => child.kill("SIGKILL"); /* never outlive the test process */
	process.on("exit", orphan);
	const exit = new Promise((resolve) => child.on("exit", (code, signal) => {
		exited = { code, signal };
		process.off("exit", orphan);
		resolve(exited);
	}));
	const stop = async () => {
		if (!exited) {
			child.kill("SIGTERM");
			const timer = setTimeout(() => child.kill("SIGKILL"), STOP_BUDGET_MS);
			await exit;
			clearTimeout(timer);
		}
		await rm(root, { recursive: true, force: true });
		return exited;
	};
	try {
		const info = await until("server.json", START_BUDGET_MS, async () => {
			if (exited)
				throw new Error(`s0 serve exited early (${JSON.stringify(exited)}):\n${log}`);
			try {
				const j = JSON.parse(await readFile(join(data, "server.json"), "utf8"));
				return j.pid === child.pid ? j : null;
			} catch {
				return null; /* not written yet */
			}
		});
		assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/);
		const health = await (await fetch(`${info.url}/healthz`)).json();
		assert.equal(health.success, true);
		assert.equal(health.data.status, "healthy");
		return { url: info.url, token, data, child, stop, log: () => log };
	} catch (e) {
		await stop();
		throw e;
	}
}

/**
 * Records method, path and HTTP status of every response the SDK receives
 * (a documented ClientOptions.middleware hook; it changes nothing), so the
 * tests can hold the server to the exact success statuses of docs/wire.md §3.0.
 */
export function wireRecorder() {
	const seen = [];
	return {
		seen,
		middleware: {
			post: async ({ url, init, response }) => {
				const u = new URL(url);
				const type = response.headers.get("content-type") ?? "";
				let json;
				if (type.startsWith("application/json"))
					json = JSON.parse(await response.text()); /* a clone: the SDK reads its own */
				seen.push({ method: init.method ?? "GET", path: u.pathname, query: u.search,
					status: response.status, type, json });
				return undefined; /* keep the SDK's own response */
			},
		},
		/** The last recorded exchange; asserts its method, path and status. */
		expectLast(method, path, status) {
			const last = seen[seen.length - 1];
			assert.ok(last, "no response recorded");
			assert.equal(last.method, method);
			assert.equal(last.path, path);
			assert.equal(last.status, status,
				`${method} ${path} answered ${last.status}, docs/wire.md §3.0 says ${status}`);
			return last;
		},
	};
}

/** Everything a suite needs: server, SDK client (with recorder), raw access. */
export async function setup(extraArgs = []) {
	const server = await startServer(extraArgs);
	const wire = wireRecorder();
	const sdk = new Client({ token: server.token, baseUrl: server.url, middleware: [wire.middleware] });
	const raw = async (method, path, { body, headers = {}, token = server.token } = {}) => {
		const h = { ...headers };
		if (token !== null)
			h.Authorization = `Bearer ${token}`;
		let payload = body;
		if (body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array)) {
			payload = JSON.stringify(body);
			h["Content-Type"] ??= "application/json";
		}
		const res = await fetch(server.url + path, { method, headers: h, body: payload });
		const text = await res.text();
		let json;
		try {
			json = text ? JSON.parse(text) : undefined;
		} catch {
			json = undefined;
		}
		return { status: res.status, headers: res.headers, text, json };
	};
	/** Server state of one sandbox: GET /api/v1/sandboxes/{id} → data (asserts 200). */
	const state = async (id) => {
		const r = await raw("GET", `/api/v1/sandboxes/${encodeURIComponent(id)}`);
		assert.equal(r.status, 200, r.text);
		assert.equal(r.json.success, true);
		checkSandboxWire(r.json.data);
		return r.json.data;
	};
	/*
	 * The local node has 16 warm carriers (s0_local_options.warm_carriers):
	 * tests delete what they claim. track() notes an id, cleanup() deletes
	 * every noted sandbox that still exists (plain requests, 404 is fine).
	 */
	const tracked = new Set();
	const track = (id) => { tracked.add(id); return id; };
	const cleanup = async () => {
		for (const id of tracked) {
			const r = await raw("DELETE", `/api/v1/sandboxes/${encodeURIComponent(id)}`);
			assert.ok(r.status === 202 || r.status === 404, `cleanup delete ${id}: ${r.text}`);
		}
		tracked.clear();
	};
	/* SIGTERM: requests finish, the backend closes, exit status 0 */
	const stop = async () => {
		const x = await server.stop();
		assert.deepEqual(x, { code: 0, signal: null }, `s0 serve did not stop cleanly:\n${server.log()}`);
	};
	/* claim through the SDK (201 on the wire), deleted after the test */
	const claim = async (options) => {
		const sb = await sdk.sandboxes.claim("default", options);
		wire.expectLast("POST", "/api/v1/sandboxes", 201);
		return (track(sb.id), sb);
	};
	return { server, wire, sdk, raw, state, track, cleanup, stop, claim };
}

/**
 * One harness for the enclosing file or describe(): started before its
 * tests, stopped after them, tracked sandboxes deleted after each test.
 * The object is filled in by the before() hook.
 */
export function useHarness(args = []) {
	const h = {};
	before(async () => { Object.assign(h, await setup(args)); });
	after(async () => { await h.stop?.(); });
	afterEach(async () => { await h.cleanup(); });
	return h;
}

/** The SDK's Date for a wire timestamp (it does `new Date(json[key])`). */
export function sdkDate(wire) {
	return new Date(wire).getTime();
}

export function checkTime(v, what, { nullable = false } = {}) {
	if (nullable && v === null)
		return;
	assert.equal(typeof v, "string", `${what} must be an RFC 3339 string, got ${JSON.stringify(v)}`);
	assert.match(v, RFC3339_UTC, `${what} must be RFC 3339 UTC: ${v}`);
	assert.ok(!Number.isNaN(Date.parse(v)), `${what} must parse: ${v}`);
}

export function checkStatus(v, what = "status") {
	assert.ok(STATUSES.includes(v), `${what} ${JSON.stringify(v)} is not a SandboxLifecycleStatus`);
}

/** Wire `Sandbox` (docs/wire.md §3.3): required keys, types, enum, timestamps. */
export function checkSandboxWire(d) {
	for (const k of ["id", "template_id", "team_id", "pod_name"])
		assert.equal(typeof d[k], "string", `Sandbox.${k}`);
	checkStatus(d.status);
	assert.equal(typeof d.paused, "boolean", "Sandbox.paused");
	assert.equal(typeof d.auto_resume, "boolean", "Sandbox.auto_resume");
	assert.ok(Number.isInteger(d.runtime_generation), "Sandbox.runtime_generation");
	assert.equal(typeof d.runtime_id, "string", "Sandbox.runtime_id (§6.2: \"\" rather than null)");
	for (const k of ["claimed_at", "created_at", "updated_at"])
		checkTime(d[k], `Sandbox.${k}`);
	for (const k of ["expires_at", "hard_expires_at"]) {
		assert.ok(k in d, `Sandbox.${k} must be present (docs/wire.md §3.0)`);
		checkTime(d[k], `Sandbox.${k}`, { nullable: true });
	}
}

/** Wire `SandboxSummary` (docs/wire.md §3.2). */
export function checkSummaryWire(d) {
	for (const k of ["id", "template_id"])
		assert.equal(typeof d[k], "string", `SandboxSummary.${k}`);
	checkStatus(d.status);
	assert.equal(typeof d.paused, "boolean");
	assert.ok(Number.isInteger(d.runtime_generation));
	for (const k of ["created_at", "updated_at"])
		checkTime(d[k], `SandboxSummary.${k}`);
	for (const k of ["expires_at", "hard_expires_at"]) {
		assert.ok(k in d, `SandboxSummary.${k} must be present`);
		checkTime(d[k], `SandboxSummary.${k}`, { nullable: true });
	}
}

/** The SDK's `Sandbox` model equals the server's wire `Sandbox`. */
export function assertSandboxEquals(s, d) {
	assert.equal(s.id, d.id);
	assert.equal(s.templateId, d.template_id);
	assert.equal(s.teamId, d.team_id);
	assert.equal(s.userId, d.user_id ?? undefined);
	assert.equal(s.status, d.status);
	assert.equal(s.paused, d.paused);
	assert.equal(s.autoResume, d.auto_resume);
	assert.equal(s.podName, d.pod_name);
	assert.equal(s.runtimeGeneration, d.runtime_generation);
	assert.deepEqual(s.resources, d.resources ?? undefined);
	for (const [k, w] of [["expiresAt", "expires_at"], ["hardExpiresAt", "hard_expires_at"],
		["claimedAt", "claimed_at"], ["createdAt", "created_at"], ["updatedAt", "updated_at"]]) {
		assert.ok(s[k] instanceof Date, `${k} is a Date`);
		assert.ok(!Number.isNaN(s[k].getTime()), `SDK ${k} is a valid Date (wire ${d[w]})`);
		assert.equal(s[k].getTime(), sdkDate(d[w]), `${k} vs wire ${w}=${d[w]}`);
	}
}

/** The SDK's `SandboxSummary` equals the server's wire summary. */
export function assertSummaryEquals(s, d) {
	assert.equal(s.id, d.id);
	assert.equal(s.templateId, d.template_id);
	assert.equal(s.status, d.status);
	assert.equal(s.paused, d.paused);
	assert.equal(s.runtimeGeneration, d.runtime_generation);
	for (const [k, w] of [["expiresAt", "expires_at"], ["hardExpiresAt", "hard_expires_at"],
		["createdAt", "created_at"], ["updatedAt", "updated_at"]]) {
		assert.ok(!Number.isNaN(s[k].getTime()), `SDK ${k} is a valid Date (wire ${d[w]})`);
		assert.equal(s[k].getTime(), sdkDate(d[w]), `${k} vs wire ${w}`);
	}
}

/** Runs `fn`, which must throw the SDK's APIError with this status and code (or one of codes). */
export async function expectAPIError(fn, statusCode, code, messagePattern) {
	const { APIError } = await import("sandbox0");
	let err;
	try {
		await fn();
	} catch (e) {
		err = e;
	}
	assert.ok(err, `expected APIError ${statusCode} ${code}, the call succeeded`);
	assert.ok(err instanceof APIError, `expected APIError, got ${err?.name}: ${err?.message}`);
	assert.equal(err.name, "APIError");
	assert.equal(err.statusCode, statusCode, `status (${err.code}: ${err.message})`);
	if (Array.isArray(code))
		assert.ok(code.includes(err.code), `code ${err.code} not in ${code} (${err.message})`);
	else
		assert.equal(err.code, code, `code (${err.message})`);
	if (messagePattern)
		assert.match(err.message, messagePattern);
	assert.ok(err.requestId, "the X-Request-ID reaches APIError.requestId");
	return err;
}

/** ms between a wire timestamp and now (positive: in the future). */
export function fromNow(wire) {
	return Date.parse(wire) - Date.now();
}

/*
 * Every exchange the SDK made, held to docs/wire.md §2.1 and §3.0: the envelope,
 * the exact success status of the route, enum values, required fields.
 * Each suite ends with it (audit test), so a rendering slip in any call is
 * caught even where a test did not look at that field.
 */
const ROUTES = [
	// [method, path regexp, success status, data check]
	["POST", /^\/api\/v1\/sandboxes$/, 201, (d) => {
		for (const k of ["sandbox_id", "pod_name", "template", "runtime_id"])
			assert.equal(typeof d[k], "string", `ClaimResponse.${k}`);
		checkStatus(d.status);
	}],
	["GET", /^\/api\/v1\/sandboxes$/, 200, (d) => {
		assert.ok(Array.isArray(d.sandboxes), "list: sandboxes array");
		assert.ok(Number.isInteger(d.count), "list: count");
		assert.equal(typeof d.has_more, "boolean", "list: has_more");
		d.sandboxes.forEach(checkSummaryWire);
	}],
	["GET", /^\/api\/v1\/sandboxes\/[^/]+$/, 200, checkSandboxWire],
	["PUT", /^\/api\/v1\/sandboxes\/[^/]+$/, 200, checkSandboxWire],
	["DELETE", /^\/api\/v1\/sandboxes\/[^/]+$/, 202, (d) => {
		assert.deepEqual(d, { message: "sandbox terminated successfully" });
	}],
	["GET", /^\/api\/v1\/sandboxes\/[^/]+\/status$/, 200, (d) => {
		checkStatus(d.status);
		for (const k of ["claimed_at", "created_at"])
			assert.match(d[k], /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/, `SandboxStatus.${k}`);
		for (const k of ["expires_at", "hard_expires_at"])
			checkTime(d[k], `SandboxStatus.${k}`, { nullable: true });
	}],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/pause$/, 200, (d) => {
		assert.equal(typeof d.sandbox_id, "string");
		assert.equal(typeof d.paused, "boolean");
		checkStatus(d.status);
		assert.equal(d.paused, d.status === "paused", "PauseSandboxResponse: paused ⇔ status paused");
	}],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/resume$/, 200, (d) => {
		assert.equal(typeof d.sandbox_id, "string");
		assert.equal(typeof d.resumed, "boolean");
	}],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/refresh$/, 200, (d) => {
		assert.equal(typeof d.sandbox_id, "string");
		for (const k of ["expires_at", "hard_expires_at"]) {
			assert.ok(k in d, `RefreshResponse.${k} present`);
			checkTime(d[k], `RefreshResponse.${k}`, { nullable: true });
		}
	}],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/snapshots$/, 201, checkSnapshotWire],
	["GET", /^\/api\/v1\/sandboxes\/[^/]+\/snapshots$/, 200, (d) => {
		assert.ok(Array.isArray(d.snapshots));
		assert.equal(d.count, d.snapshots.length);
		d.snapshots.forEach(checkSnapshotWire);
	}],
	["GET", /^\/api\/v1\/sandbox-rootfs-snapshots\/[^/]+$/, 200, checkSnapshotWire],
	["DELETE", /^\/api\/v1\/sandbox-rootfs-snapshots\/[^/]+$/, 200, (d) => {
		assert.deepEqual(d, { deleted: true });
	}],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/rootfs\/restore$/, 200, (d) => {
		assert.equal(typeof d.sandbox_id, "string");
		assert.equal(typeof d.snapshot_id, "string");
		assert.equal(d.status, "paused");
	}],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/fork$/, 201, (d) => {
		assert.equal(typeof d.source_sandbox_id, "string");
		checkSandboxWire(d.sandbox);
		assert.equal(d.sandbox.status, "paused");
		assert.equal(d.sandbox.paused, true);
	}],
	["GET", /^\/api\/v1\/sandboxes\/[^/]+\/files$/, 200, null],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/files$/, 200, (d) => {
		assert.deepEqual(d, { written: true });
	}],
	["DELETE", /^\/api\/v1\/sandboxes\/[^/]+\/files$/, 200, (d) => {
		assert.deepEqual(d, { deleted: true });
	}],
	["GET", /^\/api\/v1\/sandboxes\/[^/]+\/files\/stat$/, 200, checkFileInfoWire],
	["GET", /^\/api\/v1\/sandboxes\/[^/]+\/files\/list$/, 200, (d) => {
		assert.ok(Array.isArray(d.entries));
		d.entries.forEach(checkFileInfoWire);
	}],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/files\/move$/, 200, (d) => {
		assert.deepEqual(d, { moved: true });
	}],
	["GET", /^\/api\/v1\/sandboxes\/[^/]+\/network$/, 200, checkNetworkPolicyWire],
	["PUT", /^\/api\/v1\/sandboxes\/[^/]+\/network$/, 200, checkNetworkPolicyWire],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/contexts$/, 201, (d) => {
		assert.equal(typeof d.id, "string", "ContextResponse.id");
		assert.ok(["repl", "cmd"].includes(d.type), `ContextResponse.type ${d.type}`);
		assert.equal(typeof d.running, "boolean", "ContextResponse.running");
	}],
	["POST", /^\/api\/v1\/sandboxes\/[^/]+\/contexts\/[^/]+\/exec$/, 200, (d) => {
		assert.equal(typeof d.output_raw, "string", "ContextExecResponse.output_raw");
	}],
];

/** Wire `SandboxNetworkPolicy` (GET/PUT …/network): mode enum, egress lists. */
export function checkNetworkPolicyWire(d) {
	assert.ok(["allow-all", "block-all"].includes(d.mode), `SandboxNetworkPolicy.mode ${d.mode}`);
	if ("egress" in d) {
		assert.equal(typeof d.egress, "object", "SandboxNetworkPolicy.egress");
		for (const k of ["allowedDomains", "allowedCidrs", "deniedDomains", "deniedCidrs"])
			if (k in d.egress)
				assert.ok(d.egress[k].every((x) => typeof x === "string"), `egress.${k}`);
		for (const k of ["allowedPorts", "deniedPorts", "trafficRules"])
			if (k in d.egress)
				assert.ok(Array.isArray(d.egress[k]), `egress.${k}`);
	}
}

function checkSnapshotWire(d) {
	for (const k of ["id", "sandbox_id"])
		assert.equal(typeof d[k], "string", `SandboxRootFSSnapshot.${k}`);
	checkTime(d.created_at, "SandboxRootFSSnapshot.created_at");
	if ("expires_at" in d)
		checkTime(d.expires_at, "SandboxRootFSSnapshot.expires_at (never null)");
}

function checkFileInfoWire(d) {
	for (const k of ["name", "path", "mode"])
		assert.equal(typeof d[k], "string", `FileInfo.${k}`);
	assert.ok(["file", "dir", "symlink"].includes(d.type), `FileInfo.type ${d.type}`);
	assert.ok(Number.isInteger(d.size), "FileInfo.size");
	assert.equal(typeof d.is_link, "boolean", "FileInfo.is_link");
	checkTime(d.mod_time, "FileInfo.mod_time");
}

export function auditWire(seen, { pause202 = false } = {}) {
	assert.ok(seen.length > 0, "the SDK made requests");
	for (const x of seen) {
		const what = `${x.method} ${x.path}${x.query} → ${x.status}`;
		const route = ROUTES.find(([m, re]) => m === x.method && re.test(x.path));
		assert.ok(route, `unexpected route ${what}`);
		const [, , status, check] = route;
		if (x.status >= 200 && x.status < 300) {
			let want = status;
			if (x.method === "POST" && /\/files$/.test(x.path) && /[?&]mkdir=true/.test(x.query))
				want = 201;
			const ok = x.status === want || (pause202 && x.status === 202 && /\/pause$/.test(x.path));
			assert.ok(ok, `${what}: docs/wire.md §3.0 says ${want}`);
			if (check === null && !x.json)
				continue; /* raw file bytes */
			assert.ok(x.type.startsWith("application/json"), `${what}: JSON content type, got ${x.type}`);
			assert.equal(x.json.success, true, `${what}: success envelope`);
			assert.ok("data" in x.json, `${what}: data`);
			if (want === 201 && /\/files$/.test(x.path))
				assert.deepEqual(x.json.data, { created: true }, what);
			else if (check)
				check(x.json.data);
		} else {
			assert.ok(x.status >= 400 && x.status < 600, `${what}: not a 2xx, 4xx or 5xx`);
			assert.ok(x.type.startsWith("application/json"), `${what}: JSON error, got ${x.type}`);
			assert.equal(x.json.success, false, `${what}: error envelope`);
			assert.equal(typeof x.json.error?.code, "string", `${what}: error.code`);
			assert.equal(typeof x.json.error?.message, "string", `${what}: error.message`);
			assert.ok(!("data" in x.json), `${what}: no data on an error`);
		}
	}
}
