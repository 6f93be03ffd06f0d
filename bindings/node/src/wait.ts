/**
 * Wait options and the bridge from AbortSignal to the library's cancel
 * token (docs/decisions.md "Wait helpers"; README "Waits").
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
	memory?: boolean | undefined;
	/**
	 * Deadline of the whole call in ms: finite and >= 0, or `Infinity` for
	 * none. Default 60 000, or 360 000 in memory mode. Reaching it rejects
	 * with SandboxWaitTimeoutError; the server's operation goes on.
	 */
	timeoutMs?: number | undefined;
	/**
	 * Largest sleep between polls in ms (> 0; default 500): the cap of the
	 * library's backoff (first poll at once, then 100 ms growing ×1.5 with
	 * jitter up to this cap, never past the deadline).
	 */
	pollIntervalMs?: number | undefined;
	/** Aborting rejects with `signal.reason` promptly; an accepted pause/resume goes on. */
	signal?: AbortSignal | undefined;
	/** Called on the first observation and on every observed change of state. */
	onProgress?: ((sandbox: Sandbox, elapsedMs: number) => void) | undefined;
}

/** Check wait options before any request (RangeError, like the official SDK). */
export function nativeWaitOptions(o: SandboxLifecycleWaitOptions | undefined): NativeWaitOptions {
	if (o !== undefined && o !== null && typeof o !== "object")
		throw new TypeError("wait options must be an object");
	const opts = o ?? {};
	if (opts.memory !== undefined && typeof opts.memory !== "boolean")
		throw new TypeError("memory must be a boolean");
	if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal))
		throw new TypeError("signal must be an AbortSignal");
	if (opts.onProgress !== undefined && typeof opts.onProgress !== "function")
		throw new TypeError("onProgress must be a function");
	let timeoutMs = 0;
	if (opts.timeoutMs !== undefined) {
		if (typeof opts.timeoutMs !== "number" || Number.isNaN(opts.timeoutMs) || opts.timeoutMs < 0 ||
			opts.timeoutMs === -Infinity)
			throw new RangeError("timeoutMs must be a finite number >= 0 (or Infinity for no deadline)");
		// past 2^53 ms (285,000 years) a budget is no deadline
		timeoutMs = opts.timeoutMs > Number.MAX_SAFE_INTEGER ? -1 : Math.max(1, Math.floor(opts.timeoutMs));
	}
	let pollMaxMs = 0;
	if (opts.pollIntervalMs !== undefined) {
		if (typeof opts.pollIntervalMs !== "number" || !Number.isFinite(opts.pollIntervalMs) || opts.pollIntervalMs <= 0)
			throw new RangeError("pollIntervalMs must be a finite number > 0");
		pollMaxMs = Math.min(MAX_POLL_MS, Math.max(1, Math.floor(opts.pollIntervalMs)));
	}
	return { memory: opts.memory === undefined ? 0 : opts.memory ? 1 : 2, timeoutMs, pollMaxMs };
}

/** Largest backoff cap passed to the library (a day; the deadline bounds every sleep anyway). */
const MAX_POLL_MS = 86_400_000;

/**
 * One "abort" listener per signal, whatever the number of calls sharing it
 * (a listener per call trips Node's MaxListenersExceededWarning past ten).
 */
const aborters = new WeakMap<AbortSignal, Set<() => void>>();

function onAbortOf(signal: AbortSignal, fire: () => void): () => void {
	let set = aborters.get(signal);
	if (!set) {
		const fresh = new Set<() => void>();
		set = fresh;
		aborters.set(signal, fresh);
		signal.addEventListener("abort", () => {
			aborters.delete(signal);
			for (const f of fresh)
				f();
		}, { once: true });
	}
	set.add(fire);
	const mine = set;
	return () => { mine.delete(fire); };
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
	userError?: () => { error: unknown } | undefined): Promise<T> {
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
	const unlisten = signal && token ? onAbortOf(signal, () => native.tokenCancel(token)) : null;
	try {
		return await start(token, progress);
	} catch (e) {
		const err = e as { code?: unknown };
		if (signal?.aborted && err && err.code === Code.ECANCELED)
			throw abortReason(signal);
		const user = userError?.();
		if (user !== undefined && err && err.code === Code.EUSER)
			throw user.error;
		throw toError(e, options?.timeoutMs !== undefined && Number.isFinite(options.timeoutMs) ? options.timeoutMs : undefined);
	} finally {
		unlisten?.();
		if (token)
			native.tokenFree(token);
	}
}

export { call };
