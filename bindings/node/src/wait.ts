/**
 * Wait options and the bridge from AbortSignal to the library's cancel
 * token (design.md §6 "Wait helpers"; README "Waits").
 */
import { call, toError } from "./errors.js";
import { Code } from "./errors.generated.js";
import type { Handle, NativeWaitOptions, ProgressHook } from "./native.js";
import { native } from "./native.js";
import { toSandbox } from "./models.js";
import type { Sandbox } from "./models.js";

/** Options of pauseAndWait, resumeAndWait and waitForLifecycle. */
export interface SandboxLifecycleWaitOptions {
	/**
	 * Memory mode for pause/resume: `true` sends `{"memory":true}`, `false`
	 * sends `{"memory":false}`, absent sends no body (filesystem-only).
	 * Ignored by waitForLifecycle.
	 */
	memory?: boolean;
	/**
	 * Deadline of the whole call in ms: finite and >= 0, or `Infinity` for
	 * none. Default 60 000, or 360 000 in memory mode. Reaching it rejects
	 * with SandboxWaitTimeoutError; the server's operation goes on.
	 */
	timeoutMs?: number;
	/**
	 * Largest sleep between polls in ms (> 0; default 500): the cap of the
	 * library's backoff (first poll at once, then 100 ms growing ×1.5 with
	 * jitter up to this cap, never past the deadline).
	 */
	pollIntervalMs?: number;
	/** Aborting rejects with `signal.reason` promptly; an accepted pause/resume goes on. */
	signal?: AbortSignal;
	/** Called on the first observation and on every observed change of state. */
	onProgress?: (sandbox: Sandbox, elapsedMs: number) => void;
}

/** Check wait options before any request (RangeError, like the official SDK). */
export function nativeWaitOptions(o: SandboxLifecycleWaitOptions | undefined): NativeWaitOptions {
	const opts = o ?? {};
	if (opts.memory !== undefined && typeof opts.memory !== "boolean")
		throw new TypeError("memory must be a boolean");
	let timeoutMs = 0;
	if (opts.timeoutMs !== undefined) {
		if (typeof opts.timeoutMs !== "number" || Number.isNaN(opts.timeoutMs) || opts.timeoutMs < 0 ||
			opts.timeoutMs === -Infinity)
			throw new RangeError("timeoutMs must be a finite number >= 0 (or Infinity for no deadline)");
		timeoutMs = opts.timeoutMs === Infinity ? -1 : Math.max(1, Math.floor(opts.timeoutMs));
	}
	let pollMaxMs = 0;
	if (opts.pollIntervalMs !== undefined) {
		if (typeof opts.pollIntervalMs !== "number" || !Number.isFinite(opts.pollIntervalMs) || opts.pollIntervalMs <= 0)
			throw new RangeError("pollIntervalMs must be a finite number > 0");
		pollMaxMs = Math.max(1, Math.floor(opts.pollIntervalMs));
	}
	return { memory: opts.memory === undefined ? 0 : opts.memory ? 1 : 2, timeoutMs, pollMaxMs };
}

function abortReason(signal: AbortSignal): unknown {
	if (signal.reason !== undefined)
		return signal.reason;
	const e = new Error("sandbox lifecycle wait was aborted");
	e.name = "AbortError";
	return e;
}

/**
 * Run one native wait with the signal wired to a fresh cancel token and
 * the progress callback wrapped (its exceptions are reported, not thrown
 * into the addon). Rejections become error classes; an abort rejects with
 * `signal.reason`; a deadline with SandboxWaitTimeoutError carrying the
 * caller's budget.
 */
export async function runWait<T>(options: SandboxLifecycleWaitOptions | undefined,
	start: (token: Handle | null, progress: ProgressHook | null) => Promise<T>,
	userError?: () => unknown): Promise<T> {
	const signal = options?.signal;
	if (signal?.aborted)
		throw abortReason(signal);
	const cb = options?.onProgress;
	const progress: ProgressHook | null = cb ? (json, elapsed) => {
		try {
			cb(toSandbox(json), elapsed);
		} catch (e) {
			queueMicrotask(() => { throw e; });
		}
	} : null;
	const token = signal ? native.tokenNew() : null;
	const onAbort = () => { if (token) native.tokenCancel(token); };
	signal?.addEventListener("abort", onAbort, { once: true });
	try {
		return await start(token, progress);
	} catch (e) {
		const err = e as { code?: unknown };
		if (signal?.aborted && err && err.code === Code.ECANCELED)
			throw abortReason(signal);
		const user = userError?.();
		if (user !== undefined && err && err.code === Code.EUSER)
			throw user;
		throw toError(e, options?.timeoutMs !== undefined && Number.isFinite(options.timeoutMs) ? options.timeoutMs : undefined);
	} finally {
		signal?.removeEventListener("abort", onAbort);
		if (token)
			native.tokenFree(token);
	}
}

export { call };
