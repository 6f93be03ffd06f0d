/**
 * The client: `new Client({ token, baseUrl, userAgent, headers })` and
 * `client.sandboxes.*`, shaped like the official `sandbox0` npm package.
 */
import { call, callSync } from "./errors.js";
import { native } from "./native.js";
import type { Handle, NativeClientOptions, NativeConfig } from "./native.js";
import {
	snakeize, toFileInfo, toLifecycle, toNetworkPolicy, toObject, toSandbox, toSnapshot,
} from "./models.js";
import type {
	FileInfo, LifecycleResponse, NetworkPolicy, Sandbox, SandboxLifecycleStatus, SandboxListResult,
	SandboxRootFSSnapshot,
} from "./models.js";
import { nativeWaitOptions, runWait } from "./wait.js";
import {
	BaseStream, ContextStream, FileWatchStream, KIND_CONTEXT, KIND_FILES_WATCH, KIND_SESSION, SessionStream,
	openStream,
} from "./streams.js";
import type { StreamOptions } from "./streams.js";
import type { SandboxLifecycleWaitOptions } from "./wait.js";

/** The official default API address. */
export const DEFAULT_BASE_URL = "https://api.sandbox0.ai";

/** Client options (the official SDK's names; `token` must be a string here). */
export interface ClientOptions {
	/** Bearer token (API key or JWT). */
	token?: string | undefined;
	/** API base URL; default DEFAULT_BASE_URL. */
	baseUrl?: string | undefined;
	/** User-Agent; default "libsandbox0/<version>". */
	userAgent?: string | undefined;
	/** Extra headers sent with every request. */
	headers?: Record<string, string> | undefined;
	/** `X-Team-ID` team selector. */
	teamId?: string | undefined;
	/** Connect timeout in ms (default 10 000). */
	connectTimeoutMs?: number | undefined;
	/** Per-exchange timeout in ms (default 120 000; waits cap it by their deadline). */
	requestTimeoutMs?: number | undefined;
}

/** Sandbox configuration on claim and update (camelCase of the wire's `config`). */
export interface SandboxConfig {
	/** Soft TTL in seconds (0 disables): at expiry the sandbox pauses. */
	ttl?: number | undefined;
	/** Hard TTL in seconds (0 disables): at expiry the sandbox is deleted. */
	hardTtl?: number | undefined;
	/** Wake a paused sandbox on runtime access (server default true). */
	autoResume?: boolean | undefined;
	/** Environment variables of the sandbox's processes. */
	envVars?: Record<string, string> | undefined;
	/** Network policy, webhook, lifecycle, services…: sent snake_cased. */
	[field: string]: unknown;
}

/** Claim options (the official SDK's `ClaimSandboxOptions`). */
export interface ClaimSandboxOptions {
	config?: SandboxConfig | undefined;
	/** Initialise the RootFS from this snapshot. */
	snapshotId?: string | undefined;
	/** Memory resource, e.g. "512Mi". */
	memory?: string | undefined;
}

/** Filters and paging of `list`. */
export interface SandboxListOptions {
	status?: SandboxLifecycleStatus | undefined;
	templateId?: string | undefined;
	paused?: boolean | undefined;
	/** Page size 1..200 (default 50). */
	limit?: number | undefined;
	offset?: number | undefined;
}

/** Pause/resume options: absent options send no body. */
export interface SandboxExecutionStateOptions {
	memory?: boolean | undefined;
}

/** Fork options. */
export interface ForkSandboxRequest {
	ttl?: number | undefined;
	hardTtl?: number | undefined;
	/** Memory fork: the child is paused with a copy of the parent's memory. */
	memory?: boolean | undefined;
}

/** Options of a fork call. */
export interface ForkSandboxOptions {
	/** `Idempotency-Key`; required (1..255 characters) for memory forks. */
	idempotencyKey?: string | undefined;
}

/** Snapshot creation request. */
export interface CreateRootFSSnapshotRequest {
	name?: string | undefined;
	description?: string | undefined;
	expiresAt?: Date | undefined;
}

const STATUS_INDEX: Record<SandboxLifecycleStatus, number> = {
	starting: 1, running: 2, paused: 3, terminating: 4, failed: 5,
};

/** A TTL in whole seconds, 0..2^31-1 (0 disables); undefined stays unset. */
function ttlSeconds(v: unknown, what: string): number | undefined {
	if (v === undefined)
		return undefined;
	if (typeof v !== "number")
		throw new TypeError(`${what} must be a number of seconds`);
	if (!Number.isInteger(v) || v < 0 || v > 2147483647)
		throw new RangeError(`${what} must be a whole number of seconds, 0..2147483647 (0 disables)`);
	return v;
}

function nativeConfig(cfg: SandboxConfig | undefined, memory?: string): NativeConfig | null {
	if (!cfg && memory === undefined)
		return null;
	const { ttl, hardTtl, autoResume, envVars, ...rest } = cfg ?? {};
	const out: NativeConfig = {};
	const ttlSec = ttlSeconds(ttl, "ttl");
	const hardTtlSec = ttlSeconds(hardTtl, "hardTtl");
	if (ttlSec !== undefined)
		out.ttlSec = ttlSec;
	if (hardTtlSec !== undefined)
		out.hardTtlSec = hardTtlSec;
	if (autoResume !== undefined)
		out.autoResume = autoResume ? 1 : 2;
	if (envVars !== undefined)
		out.envVars = Object.entries(envVars as Record<string, string>).map(([k, v]) => `${k}=${v}`);
	if (memory !== undefined)
		out.memory = memory;
	if (Object.keys(rest).length)
		out.extraJson = JSON.stringify(snakeize(rest));
	return out;
}

function memoryFlag(o: SandboxExecutionStateOptions | undefined): 0 | 1 | 2 {
	if (o === undefined || o === null)
		return 0;
	if (typeof o !== "object")
		throw new TypeError("pause/resume options must be an object");
	if (o.memory !== undefined && typeof o.memory !== "boolean")
		throw new TypeError("memory must be a boolean");
	return o.memory ? 1 : 2;
}

/** `client.sandboxes`: lifecycle calls and waits. Every call returns a promise and never blocks the event loop. */
export class Sandboxes {
	/** @internal */
	constructor(private readonly client: Client) {}

	private get h(): Handle {
		return this.client.handle;
	}

	/** Claim a new sandbox from a template (`POST /api/v1/sandboxes`). */
	async claim(template: string, options?: SandboxConfig | ClaimSandboxOptions): Promise<Sandbox> {
		const o = (options ?? {}) as ClaimSandboxOptions & SandboxConfig;
		const claimShape = options !== undefined &&
			("config" in o || "snapshotId" in o || "memory" in o);
		const cfg = claimShape ? nativeConfig(o.config, o.memory) : nativeConfig(options as SandboxConfig | undefined);
		return toSandbox(await call(native.claim(this.h, template, claimShape ? o.snapshotId ?? null : null, cfg)));
	}

	/** One page of sandboxes, newest first. */
	async list(options: SandboxListOptions = {}): Promise<SandboxListResult> {
		if (options.status !== undefined && !Object.hasOwn(STATUS_INDEX, options.status))
			throw new RangeError(`status must be one of ${Object.keys(STATUS_INDEX).join(", ")}`);
		const r = await call(native.list(this.h, {
			status: options.status !== undefined ? STATUS_INDEX[options.status] : 0,
			paused: options.paused === undefined ? 0 : options.paused ? 1 : 2,
			limit: options.limit, offset: options.offset, templateId: options.templateId,
		}));
		return { sandboxes: r.items.map(toSandbox), count: r.count, hasMore: r.hasMore };
	}

	/** Read a sandbox. */
	async get(sandboxId: string): Promise<Sandbox> {
		return toSandbox(await call(native.get(this.h, sandboxId)));
	}

	/** Short status (id, template, status, timestamps). */
	async status(sandboxId: string): Promise<Sandbox> {
		return toSandbox(await call(native.status(this.h, sandboxId)));
	}

	/** Update the durable configuration (`PUT /api/v1/sandboxes/{id}`). */
	async update(sandboxId: string, request: { config: SandboxConfig } | SandboxConfig): Promise<Sandbox> {
		const cfg = "config" in request && typeof request.config === "object" && request.config !== null
			? request.config as SandboxConfig : request as SandboxConfig;
		return toSandbox(await call(native.update(this.h, sandboxId, nativeConfig(cfg) ?? {})));
	}

	/** Delete a sandbox (named snapshots stay). */
	async delete(sandboxId: string): Promise<{ message: string }> {
		await call(native.delete(this.h, sandboxId));
		return { message: "Sandbox deleted" };
	}

	/** Request a pause. No options: no body (filesystem-only); `{memory}` sends `{"memory":<bool>}`. */
	async pause(sandboxId: string, options?: SandboxExecutionStateOptions): Promise<LifecycleResponse> {
		return toLifecycle(await call(native.pause(this.h, sandboxId, memoryFlag(options))));
	}

	/** Request a resume; `resumed: false` means accepted durable work goes on. */
	async resume(sandboxId: string, options?: SandboxExecutionStateOptions): Promise<LifecycleResponse> {
		return toLifecycle(await call(native.resume(this.h, sandboxId, memoryFlag(options))));
	}

	/** Pause and wait until `status == paused && paused` (CL-01..CL-03). */
	async pauseAndWait(sandboxId: string, options?: SandboxLifecycleWaitOptions): Promise<Sandbox> {
		const o = nativeWaitOptions(options);
		const json = await runWait(options, (tok, prog) => native.pauseAndWait(this.h, sandboxId, o, tok, prog));
		return toSandbox(json);
	}

	/** Resume and wait for the new generation to be running (CL-04, CL-05). */
	async resumeAndWait(sandboxId: string, options?: SandboxLifecycleWaitOptions): Promise<Sandbox> {
		const o = nativeWaitOptions(options);
		const json = await runWait(options, (tok, prog) => native.resumeAndWait(this.h, sandboxId, o, tok, prog));
		return toSandbox(json);
	}

	/**
	 * Poll the sandbox until @p predicate returns true (it may be async);
	 * same schedule, deadline and abort rules as the helpers. An exception
	 * thrown by the predicate ends the wait with that exception.
	 */
	async waitForLifecycle(sandboxId: string, predicate: (sandbox: Sandbox) => boolean | Promise<boolean>,
		options?: SandboxLifecycleWaitOptions): Promise<Sandbox> {
		if (typeof predicate !== "function")
			throw new TypeError("predicate must be a function");
		const o = nativeWaitOptions({ ...options, memory: undefined });
		let thrown: { error: unknown } | undefined;
		const hook = (json: string, reply: (r: number) => void) => {
			let answer: boolean | Promise<boolean>;
			try {
				answer = predicate(toSandbox(json));
			} catch (e) {
				thrown = { error: e };
				reply(-6);
				return;
			}
			Promise.resolve(answer).then((v) => reply(v ? 1 : 0), (e: unknown) => {
				thrown = { error: e };
				reply(-6);
			});
		};
		const json = await runWait(options, (tok, prog) => native.wait(this.h, sandboxId, o, tok, prog, 0, hook),
			() => thrown);
		return toSandbox(json as string);
	}

	/** Refresh the soft TTL (`duration` seconds from now, or the configured ttl). */
	async refresh(sandboxId: string, request?: { duration?: number }): Promise<Sandbox> {
		return toSandbox(await call(native.refresh(this.h, sandboxId, request?.duration ?? 0)));
	}

	/** Create a named RootFS snapshot (filesystem state only). */
	async createRootFSSnapshot(sandboxId: string, request: CreateRootFSSnapshotRequest = {}): Promise<SandboxRootFSSnapshot> {
		return toSnapshot(await call(native.snapshotCreate(this.h, sandboxId, request.name ?? null,
			request.description ?? null, request.expiresAt ? request.expiresAt.getTime() : 0)));
	}

	/** A sandbox's snapshots, newest first. */
	async listRootFSSnapshots(sandboxId: string): Promise<SandboxRootFSSnapshot[]> {
		return (await call(native.snapshotList(this.h, sandboxId))).map(toSnapshot);
	}

	/** Read one snapshot. */
	async getRootFSSnapshot(snapshotId: string): Promise<SandboxRootFSSnapshot> {
		return toSnapshot(await call(native.snapshotGet(this.h, snapshotId)));
	}

	/** Delete one snapshot. */
	async deleteRootFSSnapshot(snapshotId: string): Promise<{ message: string }> {
		await call(native.snapshotDelete(this.h, snapshotId));
		return { message: "Snapshot deleted" };
	}

	/** Restore a paused sandbox's RootFS to a snapshot; it stays paused. */
	async restoreRootFS(sandboxId: string, request: { snapshotId: string }): Promise<LifecycleResponse> {
		return toLifecycle(await call(native.restore(this.h, sandboxId, request.snapshotId)));
	}

	/** Fork into a new paused sandbox; a memory fork needs `idempotencyKey` (CL-13). */
	async fork(sandboxId: string, request: ForkSandboxRequest = {}, options: ForkSandboxOptions = {}): Promise<Sandbox> {
		return toSandbox(await call(native.fork(this.h, sandboxId, {
			ttlSec: ttlSeconds(request.ttl, "ttl"), hardTtlSec: ttlSeconds(request.hardTtl, "hardTtl"),
			memory: request.memory === true,
			idempotencyKey: options.idempotencyKey,
		})));
	}

	/** The sandbox's network policy. */
	async getNetworkPolicy(sandboxId: string): Promise<NetworkPolicy> {
		return toNetworkPolicy(await call(native.networkPolicyGet(this.h, sandboxId)));
	}

	/** Replace the sandbox's network policy (applied at once, or on resume when paused). */
	async updateNetworkPolicy(sandboxId: string, policy: NetworkPolicy): Promise<NetworkPolicy> {
		return toNetworkPolicy(await call(native.networkPolicyPut(this.h, sandboxId, JSON.stringify(snakeize(policy)))));
	}

	/** Runtime operations on one sandbox (files, contexts, network). */
	sandbox(sandboxId: string): SandboxHandle {
		return new SandboxHandle(this.client, sandboxId);
	}
}

/** Files, contexts and network policy of one sandbox (the official handle's method names). */
export class SandboxHandle {
	/** @internal */
	constructor(private readonly client: Client, readonly id: string) {}

	private get h(): Handle {
		return this.client.handle;
	}

	/** Read a whole file. */
	async readFile(path: string): Promise<Uint8Array> {
		return new Uint8Array(await call(native.filesRead(this.h, this.id, path)));
	}
	/** Write a whole file (parents created). */
	async writeFile(path: string, data: Uint8Array | string): Promise<void> {
		await call(native.filesWrite(this.h, this.id, path, typeof data === "string" ? Buffer.from(data) : data));
	}
	/** lstat a path. */
	async statFile(path: string): Promise<FileInfo> {
		return toFileInfo(await call(native.filesStat(this.h, this.id, path)));
	}
	/** List a directory. */
	async listFiles(path: string): Promise<FileInfo[]> {
		return (await call(native.filesList(this.h, this.id, path))).map(toFileInfo);
	}
	/** Make a directory. */
	async mkdir(path: string, recursive = false): Promise<void> {
		await call(native.filesMkdir(this.h, this.id, path, recursive));
	}
	/** Delete a file or tree (a missing path succeeds). */
	async deleteFile(path: string): Promise<void> {
		await call(native.filesDelete(this.h, this.id, path));
	}
	/** Move or rename. */
	async moveFile(source: string, destination: string): Promise<void> {
		await call(native.filesMove(this.h, this.id, source, destination));
	}
	/** Create a context (`{type: "repl"}` or `{type: "cmd", cmd: {command: [...]}}`), snake_cased on the wire. */
	async createContext(request: Record<string, unknown>): Promise<Record<string, unknown>> {
		return toObject(await call(native.contextCreate(this.h, this.id, JSON.stringify(snakeize(request)))));
	}
	/** Read a context. */
	async getContext(contextId: string): Promise<Record<string, unknown>> {
		return toObject(await call(native.contextGet(this.h, this.id, contextId)));
	}
	/** Delete a context and kill its process. */
	async deleteContext(contextId: string): Promise<void> {
		await call(native.contextDelete(this.h, this.id, contextId));
	}
	/** Run input in a context and wait for the result (`stdout`, `stderr`, `exitCode`…). */
	async contextExec(contextId: string, input: string): Promise<Record<string, unknown>> {
		return toObject(await call(native.contextExec(this.h, this.id, contextId, input)));
	}
	/**
	 * Open a context's stream (`GET …/contexts/{id}/ws`): output by source in
	 * order, `done` per input, a terminal `done`; input, resize, signals.
	 * @throws NotFoundError `sandbox_not_found`, `context_not_found`.
	 */
	async connectWsContext(contextId: string, options: StreamOptions = {}): Promise<ContextStream> {
		return this.client.track(await openStream(this.h, KIND_CONTEXT, this.id, contextId, 0,
			new ContextStream(this.id, contextId, options.signal), options.signal));
	}
	/** Start `command` (an argv, or a string run by `sh -c`) in a new `cmd` context and stream it. */
	async cmdStream(command: string | string[], options: StreamOptions & { cwd?: string; envVars?: Record<string, string> } = {}): Promise<ContextStream> {
		const argv = typeof command === "string" ? ["sh", "-c", command] : command;
		const req: Record<string, unknown> = { type: "cmd", cmd: { command: argv } };
		if (options.cwd !== undefined)
			req.cwd = options.cwd;
		if (options.envVars !== undefined)
			req.envVars = options.envVars;
		const ctx = await this.createContext(req);
		return this.connectWsContext(String(ctx.id), options);
	}
	/**
	 * Watch files (`GET …/files/watch`), subscribed to @p path.
	 * @throws NotFoundError `sandbox_not_found`; rejects if the subscription is refused.
	 */
	async watchFiles(path: string, recursive = false, options: StreamOptions = {}): Promise<FileWatchStream> {
		const w = this.client.track(await openStream(this.h, KIND_FILES_WATCH, this.id, null, 0,
			new FileWatchStream(options.signal), options.signal));
		try {
			await w.subscribe(path, recursive);
		} catch (e) {
			w.close();
			throw e;
		}
		return w;
	}
	/** Start a supervised session (`POST …/sessions`; `{command: [...]}` and other members, snake_cased). */
	async createSession(request: Record<string, unknown>): Promise<Record<string, unknown>> {
		const r = await call(native.runtimeCall(this.h, this.id, "/sessions", "POST", JSON.stringify(snakeize(request)), null));
		return toObject(r.json);
	}
	/**
	 * Attach to a supervised session (`GET …/sessions/{id}/ws?after=`): its
	 * events with `seq` greater than `after` (default 0: from the start), then live ones.
	 * @throws NotFoundError `session_not_found`; GoneError `event_cursor_expired`.
	 */
	async attachSession(sessionId: string, options: StreamOptions & { after?: number } = {}): Promise<SessionStream> {
		const after = options.after ?? 0;
		if (!Number.isSafeInteger(after) || after < 0)
			throw new RangeError("after must be an integer >= 0 (a seq)");
		return this.client.track(await openStream(this.h, KIND_SESSION, this.id, sessionId, after,
			new SessionStream(options.signal), options.signal));
	}
	/** The sandbox's network policy. */
	async getNetworkPolicy(): Promise<NetworkPolicy> {
		return this.client.sandboxes.getNetworkPolicy(this.id);
	}
	/** Replace the network policy. */
	async updateNetworkPolicy(policy: NetworkPolicy): Promise<NetworkPolicy> {
		return this.client.sandboxes.updateNetworkPolicy(this.id, policy);
	}
}

function headerLines(h: Record<string, string> | undefined): string[] | undefined {
	if (h === undefined)
		return undefined;
	if (typeof h !== "object" || h === null || Array.isArray(h))
		throw new TypeError("headers must be an object of header names to string values");
	return Object.entries(h).map(([k, v]) => {
		if (typeof v !== "string")
			throw new TypeError(`header ${k} must have a string value`);
		return `${k}: ${v}`;
	});
}

function nativeOptions(o: ClientOptions): NativeClientOptions {
	if (typeof o !== "object" || o === null)
		throw new TypeError("client options must be an object");
	if (o.token !== undefined && typeof o.token !== "string")
		throw new TypeError("token must be a string (token providers are not supported)");
	return {
		baseUrl: o.baseUrl, token: o.token, userAgent: o.userAgent, teamId: o.teamId,
		headers: headerLines(o.headers),
		connectTimeoutMs: o.connectTimeoutMs, requestTimeoutMs: o.requestTimeoutMs,
	};
}

/**
 * A Sandbox0 API client. Cheap to create; thread-safe underneath; calls in
 * flight keep it alive. `close()` frees it once they end (optional: an
 * unreachable client is freed by the garbage collector).
 */
export class Client {
	/** Sandbox lifecycle calls. */
	readonly sandboxes: Sandboxes;
	/** @internal */
	readonly handle: Handle;

	/** @internal a handle fromHandle() passes to the constructor */
	private static pending: Handle | undefined;

	/**
	 * A client of an HTTP(S) Sandbox0 API (no I/O happens here).
	 * @throws InvalidArgumentError bad base URL, timeout or header.
	 */
	constructor(options: ClientOptions = {}) {
		const h = Client.pending;
		Client.pending = undefined;
		this.handle = h ?? callSync(() => native.clientNew(nativeOptions(options)));
		this.sandboxes = new Sandboxes(this);
	}

	/** A client from SANDBOX0_BASE_URL and SANDBOX0_TOKEN (else SANDBOX0_API_KEY); @p options win. */
	static fromEnv(options: ClientOptions = {}): Client {
		return Client.fromHandle(callSync(() => native.clientNewFromEnv(nativeOptions(options))));
	}

	/** @internal */
	static fromHandle(h: Handle): Client {
		Client.pending = h;
		return new Client();
	}

	/** Runtime operations on one sandbox. */
	sandbox(sandboxId: string): SandboxHandle {
		return new SandboxHandle(this, sandboxId);
	}

	#streams = new Set<BaseStream>();

	/** @internal close() closes the streams it opened */
	track<S extends BaseStream>(s: S): S {
		if (!s.closed) {
			this.#streams.add(s);
			s.onClose(() => this.#streams.delete(s));
		}
		return s;
	}

	/** Close its open streams, then free the client once its calls in flight end; later calls throw. Idempotent. */
	close(): void {
		for (const s of [...this.#streams])
			s.close();
		native.clientClose(this.handle);
	}
}
