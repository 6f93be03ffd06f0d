/**
 * Base error classes (hand-written part; the per-code classes are generated
 * from the C error table into errors.generated.ts).
 *
 * Names and fields follow the official `sandbox0` npm package, so code that
 * checks `instanceof APIError` / `SandboxWaitTimeoutError` /
 * `SandboxLifecycleFailedError` works with either package.
 */
import type { Sandbox } from "./models.js";

/** Fields every library error carries (all but `kind`, `s0Code` and `reason` optional). */
export interface ErrorFields {
	/** The library's code name (`s0_code_name`), e.g. `not_found`. */
	kind: string;
	/** The library's numeric code (negative `s0_code`). */
	s0Code: number;
	/** Stable reason, e.g. `waking_up`, `wait_deadline`, `data_dir_locked`. */
	reason: string;
	/** HTTP status of the failing response; 0 when not from HTTP. */
	statusCode?: number;
	/** Wire `error.code` as sent (`unexpected_response` for non-envelope bodies). */
	code?: string;
	/** Request id from the response headers. */
	requestId?: string;
	/** The envelope's `error.details`, parsed. */
	details?: unknown;
	/** The raw response body as text. */
	body?: string;
	/** Retry-After in milliseconds; undefined when absent. */
	retryAfterMs?: number;
	/** Sandbox id the failing call was about. */
	sandboxId?: string;
	/** Whether repeating the same request later may succeed. */
	retryable?: boolean;
	/** A lower-level error this one wraps. */
	cause?: unknown;
}

/** Base class of every error this package raises for a library failure. */
export class Sandbox0Error extends Error {
	/** The library's code name, one per class (`not_found`, `timeout`…). */
	readonly kind: string;
	/** The library's numeric code. */
	readonly s0Code: number;
	/** Stable snake_case reason. */
	readonly reason: string;
	/** HTTP status, 0 when the error did not come from an HTTP answer. */
	readonly statusCode: number;
	/** Wire error code, or the kind for errors made locally. */
	readonly code: string;
	/** Request id of the failing response. */
	readonly requestId?: string;
	/** Parsed `error.details`. */
	readonly details?: unknown;
	/** Raw response body. */
	readonly body?: string;
	/** Retry-After in whole seconds (rounded up), like the official SDK. */
	readonly retryAfter?: number;
	/** Retry-After in milliseconds (ours). */
	readonly retryAfterMs?: number;
	/** Sandbox the failing call was about. */
	readonly sandboxId?: string;
	/** Whether repeating the request later may succeed. */
	readonly retryable: boolean;

	constructor(message: string, fields: ErrorFields) {
		super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
		this.name = "Sandbox0Error";
		this.kind = fields.kind;
		this.s0Code = fields.s0Code;
		this.reason = fields.reason;
		this.statusCode = fields.statusCode ?? 0;
		this.code = fields.code ?? fields.kind;
		this.requestId = fields.requestId;
		this.details = fields.details;
		this.body = fields.body;
		this.retryAfterMs = fields.retryAfterMs;
		this.retryAfter = fields.retryAfterMs === undefined ? undefined : Math.ceil(fields.retryAfterMs / 1000);
		this.sandboxId = fields.sandboxId;
		this.retryable = fields.retryable ?? false;
	}
}

/** An error answer of the API (or an unexpected response); the official SDK's class. */
export class APIError extends Sandbox0Error {
	constructor(message: string, fields: ErrorFields) {
		super(message, fields);
		this.name = "APIError";
	}
}

/** A lifecycle wait reached its deadline; the server's operation goes on. */
export class SandboxWaitTimeoutError extends Sandbox0Error {
	/** The caller's budget in milliseconds. */
	readonly timeoutMs: number;
	/** The last sandbox the wait observed, if any. */
	readonly lastSandbox?: Sandbox;
	constructor(sandboxId: string, timeoutMs: number, lastSandbox?: Sandbox, fields?: Partial<ErrorFields>) {
		super(`timed out waiting for sandbox ${sandboxId} after ${timeoutMs}ms`, {
			kind: "timeout", s0Code: -15, reason: "wait_deadline", ...fields, sandboxId,
		});
		this.name = "SandboxWaitTimeoutError";
		this.timeoutMs = timeoutMs;
		this.lastSandbox = lastSandbox;
	}
}

/**
 * A memory pause or resume ended in `failed` (or a wait predicate said so):
 * never a success, and no filesystem-only request was sent instead.
 */
export class SandboxLifecycleFailedError extends Sandbox0Error {
	/** "memory pause" or "memory resume" (or the predicate's action). */
	readonly action: string;
	/** The sandbox as last observed. */
	readonly lastSandbox?: Sandbox;
	constructor(sandboxId: string, action: string, lastSandbox?: Sandbox, fields?: Partial<ErrorFields> & { message?: string }) {
		super(fields?.message ?? `sandbox ${sandboxId} ${action} failed`, {
			kind: "lifecycle_failed", s0Code: -20, reason: "lifecycle_failed", ...fields, sandboxId,
		});
		this.name = "SandboxLifecycleFailedError";
		this.action = action;
		this.lastSandbox = lastSandbox;
	}
}

/** True for HTTP 429 with code `claim_start_throttled` (the official SDK's helper). */
export function isClaimStartThrottled(error: unknown): error is APIError {
	return error instanceof APIError && error.statusCode === 429 && error.code === "claim_start_throttled";
}
