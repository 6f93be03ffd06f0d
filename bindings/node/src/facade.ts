/**
 * A UCloud/E2B-style facade (UC-01..UC-16), as the Python
 * package has it, in TypeScript's idiom:
 *
 *     const sbx = await Sandbox.create({ timeout: 600, lifecycle: { onTimeout: "pause" } });
 *     await sbx.pause();                         // memory pause, waits until paused
 *     const same = await Sandbox.connect(sbx.sandboxId, { timeout: 60 });
 *     await same.kill();                         // or Sandbox.kill(id)
 *
 * - `create({ timeout: t, lifecycle: { onTimeout: "kill" } })` (the default)
 *   claims with ttl 0, hard_ttl t; `onTimeout: "pause"` with ttl t,
 *   hard_ttl 0. t defaults to 300 s, template "default"; `autoResume`
 *   (default false) is always sent.
 * - `pause()` is a memory pause waited for up to 360 s; it never falls back
 *   to a filesystem pause. A kill-on-timeout sandbox has its hard deadline
 *   cleared once paused (paused sandboxes stay until killed).
 * - `connect(id, { timeout })` resumes a paused one with memory and waits,
 *   then resets its timeout (refresh for pause mode, hard_ttl for kill mode).
 * - `kill()` deletes; states: running, paused, killed (404/terminating).
 */
import { Client } from "./client.js";
import type { SandboxConfig } from "./client.js";
import { InvalidArgumentError, NotFoundError } from "./errors.generated.js";
import type { Sandbox as SandboxModel } from "./models.js";

const DEFAULT_TIMEOUT_SEC = 300;
const MEMORY_WAIT_MS = 360_000;
const DEFAULT_TEMPLATE = "default";

let defaultClient: Client | undefined;

/** Set (or clear with undefined) the client the facade uses when none is given; returns the previous one. */
export function setDefaultClient(client: Client | undefined): Client | undefined {
	const prev = defaultClient;
	defaultClient = client;
	return prev;
}

function clientOf(c: Client | undefined): Client {
	if (c)
		return c;
	if (defaultClient)
		return defaultClient;
	defaultClient = Client.fromEnv();
	return defaultClient;
}

function invalid(message: string): InvalidArgumentError {
	return new InvalidArgumentError(message, { kind: "invalid_argument", s0Code: -3, reason: "invalid_argument" });
}

function seconds(v: unknown, name: string): number {
	if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > 2 ** 31 - 1)
		throw invalid(`${name} must be a positive number of seconds`);
	return Math.ceil(v);
}

/** UCloud-style states. */
export type SandboxState = "running" | "paused" | "snapshotting" | "killed";

/** Map a wire sandbox (undefined = 404) to a SandboxState. */
export function stateOf(sb: SandboxModel | undefined): SandboxState {
	if (!sb)
		return "killed";
	if (sb.paused || sb.status === "paused")
		return "paused";
	if (sb.status === "terminating")
		return "killed";
	return "running";
}

/** Lifecycle of Sandbox.create. */
export interface SandboxLifecycle {
	/** What the timeout does (default "kill"). */
	onTimeout?: "kill" | "pause" | undefined;
	/** Wake on runtime access (default false). */
	autoResume?: boolean | undefined;
}

/** Options of Sandbox.create. */
export interface SandboxCreateOptions {
	template?: string | undefined;
	/** Seconds until the timeout action (default 300). */
	timeout?: number | undefined;
	lifecycle?: SandboxLifecycle | undefined;
	envs?: Record<string, string> | undefined;
	client?: Client | undefined;
}

/** The SandboxConfig Sandbox.create sends. */
export function claimConfig(timeout?: number, lifecycle: SandboxLifecycle = {}): SandboxConfig {
	const t = timeout === undefined ? DEFAULT_TIMEOUT_SEC : seconds(timeout, "timeout");
	for (const k of Object.keys(lifecycle))
		if (k !== "onTimeout" && k !== "autoResume")
			throw invalid(`unknown lifecycle key: ${k}`);
	const onTimeout = lifecycle.onTimeout ?? "kill";
	if (onTimeout !== "kill" && onTimeout !== "pause")
		throw invalid('lifecycle.onTimeout must be "pause" or "kill"');
	const autoResume = lifecycle.autoResume ?? false;
	if (typeof autoResume !== "boolean")
		throw invalid("lifecycle.autoResume must be a boolean");
	return onTimeout === "pause" ? { ttl: t, hardTtl: 0, autoResume } : { ttl: 0, hardTtl: t, autoResume };
}

function killOnTimeout(sb: SandboxModel): boolean {
	return sb.hardExpiresAt !== undefined && sb.expiresAt === undefined;
}

async function resetTimeout(c: Client, sb: SandboxModel, timeout: number): Promise<void> {
	if (sb.expiresAt === undefined && (sb.hardExpiresAt !== undefined || !sb.paused))
		await c.sandboxes.update(sb.id, { hardTtl: timeout });
	else
		await c.sandboxes.refresh(sb.id, { duration: timeout });
}

async function pauseWithMemory(c: Client, id: string): Promise<void> {
	const killMode = killOnTimeout(await c.sandboxes.get(id));
	await c.sandboxes.pauseAndWait(id, { memory: true, timeoutMs: MEMORY_WAIT_MS });
	if (killMode)
		await c.sandboxes.update(id, { hardTtl: 0 });
}

/** A sandbox as listed. */
export interface SandboxInfo {
	sandboxId: string;
	templateId?: string;
	state: SandboxState;
	startedAt?: Date;
	/** When the timeout acts (soft expiry for pause, hard for kill). */
	endAt?: Date;
	/** The full wire view. */
	sandbox: SandboxModel;
}

function infoOf(sb: SandboxModel): SandboxInfo {
	return {
		sandboxId: sb.id, templateId: sb.templateId, state: stateOf(sb), startedAt: sb.createdAt,
		endAt: sb.expiresAt ?? sb.hardExpiresAt, sandbox: sb,
	};
}

/** Filter of Sandbox.list: the states to list (undefined = all). */
export interface SandboxQuery {
	state?: SandboxState[] | undefined;
}

/** Offset pages over one or more state queries; also an async iterable of SandboxInfo. */
export class SandboxPaginator implements AsyncIterable<SandboxInfo> {
	private readonly plans: Array<{ paused?: boolean; status?: "running" }> = [];
	private index = 0;
	private offset = 0;
	private readonly seen = new Set<string>();
	/** Whether nextItems() may return more. */
	hasNext: boolean;

	/** @internal */
	constructor(private readonly client: Client, query: SandboxQuery | undefined, private readonly limit: number) {
		if (!Number.isInteger(limit) || limit < 1 || limit > 200)
			throw invalid("limit must be between 1 and 200");
		if (!query?.state) {
			this.plans.push({});
		} else {
			for (const s of query.state) {
				if (s === "paused" && !this.plans.some((p) => p.paused))
					this.plans.push({ paused: true });
				else if (s === "running" && !this.plans.some((p) => p.status))
					this.plans.push({ status: "running" });
			}
		}
		this.hasNext = this.plans.length > 0;
	}

	/** Opaque position ("<query>:<offset>"), undefined once drained. */
	get nextToken(): string | undefined {
		return this.hasNext ? `${this.index}:${this.offset}` : undefined;
	}

	/** The next non-empty page ([] once drained). */
	async nextItems(): Promise<SandboxInfo[]> {
		while (this.hasNext) {
			const page = await this.client.sandboxes.list({ limit: this.limit, offset: this.offset, ...this.plans[this.index] });
			const out: SandboxInfo[] = [];
			for (const sb of page.sandboxes) {
				if (!this.seen.has(sb.id)) {
					this.seen.add(sb.id);
					out.push(infoOf(sb));
				}
			}
			if (page.hasMore && page.sandboxes.length) {
				this.offset += page.sandboxes.length;
			} else {
				this.index++;
				this.offset = 0;
				this.hasNext = this.index < this.plans.length;
			}
			if (out.length || !this.hasNext)
				return out;
		}
		return [];
	}

	/** Every remaining sandbox, page by page. */
	async *[Symbol.asyncIterator](): AsyncIterator<SandboxInfo> {
		while (this.hasNext)
			yield* await this.nextItems();
	}
}

/** `sbx.files`: the files API of one sandbox (E2B style). */
export class SandboxFiles {
	/** @internal */
	constructor(private readonly sbx: Sandbox) {}
	/** File content as text (UTF-8) or bytes. */
	async read(path: string, format?: "text"): Promise<string>;
	async read(path: string, format: "bytes"): Promise<Uint8Array>;
	async read(path: string, format: "text" | "bytes" = "text"): Promise<string | Uint8Array> {
		const data = await this.sbx.client.sandbox(this.sbx.sandboxId).readFile(path);
		return format === "bytes" ? data : Buffer.from(data).toString("utf8");
	}
	/** Write a whole file (parents created). */
	async write(path: string, data: string | Uint8Array): Promise<void> {
		await this.sbx.client.sandbox(this.sbx.sandboxId).writeFile(path, data);
	}
	/** List a directory. */
	async list(path: string) {
		return this.sbx.client.sandbox(this.sbx.sandboxId).listFiles(path);
	}
	/** Whether a path exists (lstat; false on 404). */
	async exists(path: string): Promise<boolean> {
		try {
			await this.sbx.client.sandbox(this.sbx.sandboxId).statFile(path);
			return true;
		} catch (e) {
			if (e instanceof NotFoundError)
				return false;
			throw e;
		}
	}
	/** Delete a file or tree. */
	async remove(path: string): Promise<void> {
		await this.sbx.client.sandbox(this.sbx.sandboxId).deleteFile(path);
	}
	/** Make a directory and its parents. */
	async makeDir(path: string): Promise<void> {
		await this.sbx.client.sandbox(this.sbx.sandboxId).mkdir(path, true);
	}
	/** Move or rename. */
	async rename(oldPath: string, newPath: string): Promise<void> {
		await this.sbx.client.sandbox(this.sbx.sandboxId).moveFile(oldPath, newPath);
	}
}

/** A handle on one sandbox; every state comes from the API. */
export class Sandbox {
	/** The files API bound to this sandbox. */
	readonly files: SandboxFiles;

	/** A handle on @p sandboxId (no request); @p client defaults to the default client. */
	constructor(readonly sandboxId: string, readonly client: Client = clientOf(undefined)) {
		this.files = new SandboxFiles(this);
	}

	/** Create a sandbox and return it running. */
	static async create(options: SandboxCreateOptions = {}): Promise<Sandbox> {
		const c = clientOf(options.client);
		const cfg = claimConfig(options.timeout, options.lifecycle);
		if (options.envs)
			cfg.envVars = options.envs;
		const sb = await c.sandboxes.claim(options.template ?? DEFAULT_TEMPLATE, cfg);
		if (sb.status !== "running")
			await c.sandboxes.waitForLifecycle(sb.id, (s) => s.status === "running");
		return new Sandbox(sb.id, c);
	}

	/** Connect by id: resume a paused one with memory (up to 360 s), then reset its timeout (default 300 s). */
	static async connect(sandboxId: string, options: { timeout?: number; client?: Client } = {}): Promise<Sandbox> {
		const c = clientOf(options.client);
		const t = options.timeout === undefined ? DEFAULT_TIMEOUT_SEC : seconds(options.timeout, "timeout");
		let sb = await c.sandboxes.get(sandboxId);
		if (sb.paused || sb.status === "paused" || sb.status === "failed")
			sb = await c.sandboxes.resumeAndWait(sandboxId, { memory: true, timeoutMs: MEMORY_WAIT_MS });
		else if (sb.status === "starting")
			sb = await c.sandboxes.waitForLifecycle(sandboxId, (s) => s.status === "running");
		await resetTimeout(c, sb, t);
		return new Sandbox(sandboxId, c);
	}

	/** Memory pause and wait (up to 360 s); resolves with the id. */
	async pause(): Promise<string> {
		await pauseWithMemory(this.client, this.sandboxId);
		return this.sandboxId;
	}

	/** Memory pause of a sandbox by id. */
	static async pause(sandboxId: string, options: { client?: Client } = {}): Promise<string> {
		await pauseWithMemory(clientOf(options.client), sandboxId);
		return sandboxId;
	}

	/** Delete permanently. @throws NotFoundError when already killed. */
	async kill(): Promise<void> {
		await this.client.sandboxes.delete(this.sandboxId);
	}

	/** Delete a sandbox by id. */
	static async kill(sandboxId: string, options: { client?: Client } = {}): Promise<void> {
		await clientOf(options.client).sandboxes.delete(sandboxId);
	}

	/** Reset the timeout to @p timeout seconds from now. */
	async setTimeout(timeout: number): Promise<void> {
		await resetTimeout(this.client, await this.client.sandboxes.get(this.sandboxId), seconds(timeout, "timeout"));
	}

	/** The current state and times. */
	async getInfo(): Promise<SandboxInfo> {
		return infoOf(await this.client.sandboxes.get(this.sandboxId));
	}

	/** Current state; "killed" once the sandbox is gone. */
	async state(): Promise<SandboxState> {
		try {
			return stateOf(await this.client.sandboxes.get(this.sandboxId));
		} catch (e) {
			if (e instanceof NotFoundError)
				return "killed";
			throw e;
		}
	}

	/** Whether the state is "running". */
	async isRunning(): Promise<boolean> {
		return (await this.state()) === "running";
	}

	/** A named RootFS snapshot (filesystem only). */
	async createSnapshot(name?: string, description?: string) {
		return this.client.sandboxes.createRootFSSnapshot(this.sandboxId, { name, description });
	}

	/** A paginator over the sandboxes matching @p query (pages of @p limit, 1..200). */
	static list(query?: SandboxQuery, limit = 50, options: { client?: Client } = {}): SandboxPaginator {
		return new SandboxPaginator(clientOf(options.client), query, limit);
	}
}
