/**
 * Errors: the base classes, the generated per-code classes and the
 * conversion of the addon's error reports into them.
 */
import { APIError, Sandbox0Error, SandboxLifecycleFailedError, SandboxWaitTimeoutError } from "./errorbase.js";
import type { ErrorFields } from "./errorbase.js";
import { Code, ERROR_CLASSES } from "./errors.generated.js";
import type { NativeError } from "./native.js";
import { toSandbox } from "./models.js";

export { APIError, Sandbox0Error, SandboxLifecycleFailedError, SandboxWaitTimeoutError, isClaimStartThrottled } from "./errorbase.js";
export type { ErrorFields } from "./errorbase.js";
export * from "./errors.generated.js";

function isNativeError(e: unknown): e is NativeError {
	return typeof e === "object" && e !== null && !(e instanceof Error) &&
		typeof (e as NativeError).code === "number" && typeof (e as NativeError).kind === "string";
}

function fields(e: NativeError): ErrorFields {
	let details: unknown;
	if (e.detailsJson) {
		try {
			details = JSON.parse(e.detailsJson);
		} catch {
			details = e.detailsJson;
		}
	}
	return {
		kind: e.kind, s0Code: e.code, reason: e.reason,
		statusCode: e.httpStatus ?? 0,
		code: e.wireCode ?? undefined,
		requestId: e.requestId ?? undefined,
		details,
		body: e.body ? e.body.toString("utf8") : undefined,
		retryAfterMs: e.retryAfterMs !== undefined && e.retryAfterMs >= 0 ? e.retryAfterMs : undefined,
		sandboxId: e.sandboxId ?? undefined,
		retryable: e.retryable ?? false,
		cause: e.cause ? toError(e.cause) : undefined,
	};
}

/**
 * The error class for an addon report: a wait deadline is a
 * SandboxWaitTimeoutError (timeoutMs = @p budgetMs when the caller gave one),
 * a failed memory step a SandboxLifecycleFailedError, every other kind its
 * generated class. Anything else is returned unchanged.
 */
export function toError(e: unknown, budgetMs?: number): unknown {
	if (!isNativeError(e))
		return e;
	const f = fields(e);
	const last = e.lastSandboxJson ? toSandbox(e.lastSandboxJson) : undefined;
	// "predicate": the addon ended a wait whose JS predicate had not answered by the deadline
	if (e.code === Code.ETIMEDOUT && (e.reason === "wait_deadline" || e.reason === "predicate"))
		return new SandboxWaitTimeoutError(e.sandboxId ?? "", budgetMs ?? e.timeoutMs ?? 0, last, f);
	if (e.code === Code.ELIFECYCLE)
		return new SandboxLifecycleFailedError(e.sandboxId ?? "", e.action ?? e.reason, last,
			{ ...f, message: e.message });
	const Cls = ERROR_CLASSES.get(e.code) ?? (e.httpStatus ? APIError : Sandbox0Error);
	return new Cls(e.message, f);
}

function rethrow(e: unknown): never {
	throw toError(e);
}

/** A native promise with its rejection converted (a plain `catch`: no
 * async frame of its own on every call, bench/client/README.md). */
export function call<T>(p: Promise<T>): Promise<T> {
	return p.catch(rethrow);
}

/** Run a synchronous native call, converting what it throws. */
export function callSync<T>(f: () => T): T {
	try {
		return f();
	} catch (e) {
		throw toError(e);
	}
}
