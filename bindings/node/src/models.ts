/**
 * Result shapes: camelCase objects with `Date` timestamps, as the official
 * SDK's generated models. Converted from the library's JSON results.
 */

/** The wire's lifecycle states. */
export type SandboxLifecycleStatus = "starting" | "running" | "paused" | "terminating" | "failed";

/** A sandbox as one response described it. */
export interface Sandbox {
	id: string;
	templateId?: string;
	teamId?: string;
	/** Lifecycle state; read together with `paused` (a memory-pause recovery can be `failed` with `paused` true). */
	status: SandboxLifecycleStatus;
	/** Durable paused state, independent of `status`. */
	paused: boolean;
	autoResume?: boolean;
	podName?: string;
	/** Current runtime allocation id; absent or "" while paused. */
	runtimeId?: string;
	/** Advances on every resume. */
	runtimeGeneration?: number;
	/** Soft expiry; undefined when unset (null, absent or the zero time). */
	expiresAt?: Date;
	hardExpiresAt?: Date;
	claimedAt?: Date;
	createdAt?: Date;
	updatedAt?: Date;
	/** Fields the package does not model (resources, services, config…), camelCased. */
	[field: string]: unknown;
}

/** A page of `list`. */
export interface SandboxListResult {
	sandboxes: Sandbox[];
	count: number;
	hasMore: boolean;
}

/** Reply of pause/resume/restore (the response's `data`, camelCased). */
export interface LifecycleResponse {
	sandboxId?: string;
	status?: SandboxLifecycleStatus;
	paused?: boolean;
	resumed?: boolean;
	snapshotId?: string;
	/** HTTP status of the success (200, or 202 for a pause accepted while the node is unreachable). */
	httpStatus: number;
	[field: string]: unknown;
}

/** A named RootFS snapshot. */
export interface SandboxRootFSSnapshot {
	id: string;
	sandboxId: string;
	name?: string;
	description?: string;
	createdAt?: Date;
	expiresAt?: Date;
	[field: string]: unknown;
}

/** One entry of the files API. */
export interface FileInfo {
	name: string;
	path: string;
	type: "unknown" | "file" | "dir" | "symlink";
	size: number;
	mode: number;
	modTime?: Date;
	isLink: boolean;
	linkTarget?: string;
}

/** A sandbox's network policy (the wire's `SandboxNetworkPolicy`, camelCased). */
export interface NetworkPolicy {
	mode: "allow-all" | "block-all" | string;
	egress?: Record<string, unknown>;
	[field: string]: unknown;
}

const ZERO_TIME = /^0001-01-01T00:00:00(\.0+)?Z$/;

/* Keys seen so far (the wire's fixed names and a response's own map keys),
 * so each is converted once per process, not once per response; bounded. */
const camelSeen = new Map<string, string>();

function camel(key: string): string {
	let c = camelSeen.get(key);
	if (c === undefined) {
		c = key.replace(/_([a-z0-9])/g, (_m, ch: string) => ch.toUpperCase());
		if (camelSeen.size < 4096)
			camelSeen.set(key, c);
	}
	return c;
}

/** snake_case of a camelCase key (for request bodies). */
export function snake(key: string): string {
	return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function toDate(v: unknown): Date | undefined {
	if (typeof v !== "string" || v === "" || ZERO_TIME.test(v))
		return undefined;
	const d = new Date(v);
	return Number.isNaN(d.getTime()) ? undefined : d;
}

/** Deep camelCase of a parsed JSON value; `*_at` strings become Dates (unset ones are dropped). */
export function camelize(v: unknown): unknown {
	if (Array.isArray(v))
		return v.map(camelize);
	if (v === null || typeof v !== "object")
		return v;
	const out: Record<string, unknown> = {};
	for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
		if (k.endsWith("_at")) {
			const d = toDate(val);
			if (d)
				out[camel(k)] = d;
			continue;
		}
		if (val === null)
			continue;
		out[camel(k)] = camelize(val);
	}
	return out;
}

/** Deep snake_case of a request object (keys only). */
export function snakeize(v: unknown): unknown {
	if (Array.isArray(v))
		return v.map(snakeize);
	if (v === null || typeof v !== "object" || v instanceof Date)
		return v instanceof Date ? v.toISOString() : v;
	const out: Record<string, unknown> = {};
	for (const [k, val] of Object.entries(v as Record<string, unknown>))
		if (val !== undefined)
			out[snake(k)] = snakeize(val);
	return out;
}

function obj(json: string): Record<string, unknown> {
	return camelize(JSON.parse(json)) as Record<string, unknown>;
}

/** A Sandbox from the library's JSON (`sandbox_id` is accepted for `id`, `template` for `templateId`). */
export function toSandbox(json: string): Sandbox {
	const o = obj(json);
	if (o.id === undefined && typeof o.sandboxId === "string")
		o.id = o.sandboxId;
	if (o.templateId === undefined && typeof o.template === "string")
		o.templateId = o.template;
	if (typeof o.paused !== "boolean")
		o.paused = false;
	return o as Sandbox;
}

export function toLifecycle(r: { json: string; httpStatus: number }): LifecycleResponse {
	return { ...obj(r.json), httpStatus: r.httpStatus };
}

export function toSnapshot(json: string): SandboxRootFSSnapshot {
	return obj(json) as SandboxRootFSSnapshot;
}

export function toFileInfo(f: {
	name: string; path: string; type: FileInfo["type"]; size: number; mode: number;
	modTimeUnixMs: number; isLink: boolean; linkTarget: string | null;
}): FileInfo {
	return {
		name: f.name, path: f.path, type: f.type, size: f.size, mode: f.mode,
		modTime: f.modTimeUnixMs ? new Date(f.modTimeUnixMs) : undefined,
		isLink: f.isLink, linkTarget: f.linkTarget ?? undefined,
	};
}

export function toNetworkPolicy(json: string): NetworkPolicy {
	return obj(json) as NetworkPolicy;
}

/** Parse a JSON object result and camelCase it. */
export function toObject(json: string): Record<string, unknown> {
	return obj(json);
}
