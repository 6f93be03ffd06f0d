/**
 * The addon's interface (type-only declarations plus the loader). The
 * `.node` file is built by scripts/build-addon.mjs at install time into
 * native/build/; SANDBOX0_ADDON names another one (tests of a build tree).
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** Opaque handle to a library object (client, local backend, cancel token). */
export type Handle = { readonly __sandbox0Handle: unique symbol };

/** An error as the addon reports it (turned into a class by errors.ts). */
export interface NativeError {
	code: number;
	kind: string;
	reason: string;
	message: string;
	wireCode?: string | null;
	httpStatus?: number;
	requestId?: string | null;
	retryAfterMs?: number;
	detailsJson?: string | null;
	body?: Buffer;
	sandboxId?: string | null;
	action?: string | null;
	lastSandboxJson?: string | null;
	timeoutMs?: number;
	retryable?: boolean;
	claimStartThrottled?: boolean;
	cause?: NativeError;
}

export interface NativeClientOptions {
	baseUrl?: string;
	token?: string;
	userAgent?: string;
	teamId?: string;
	headers?: string[];
	connectTimeoutMs?: number;
	requestTimeoutMs?: number;
}

export interface NativeConfig {
	ttlSec?: number;
	hardTtlSec?: number;
	autoResume?: 0 | 1 | 2;
	memory?: string;
	envVars?: string[];
	extraJson?: string;
}

export interface NativeWaitOptions {
	memory: 0 | 1 | 2;
	timeoutMs: number;
	pollInitialMs?: number;
	pollMaxMs?: number;
	noJitter?: number;
	notFoundOk?: number;
}

export interface NativeFileInfo {
	name: string;
	path: string;
	type: "unknown" | "file" | "dir" | "symlink";
	size: number;
	mode: number;
	modTimeUnixMs: number;
	isLink: boolean;
	linkTarget: string | null;
}

export type ProgressHook = (json: string, elapsedMs: number) => void;
export type PredicateHook = (json: string, reply: (result: number) => void) => void;

export interface Native {
	version(): string;
	liveObjects(): number;
	liveHandles(): number;
	poolStats(): { threads: number; queued: number; inflight: number; peakThreads: number; maxThreads: number };
	setMaxThreads(n: number): void;
	errorTables(): {
		codes: Array<[string, number, string, string]>;
		wire: Array<[string, number, number, string]>;
		reasons: Array<[string, string, string]>;
	};
	clientNew(o: NativeClientOptions): Handle;
	clientNewFromEnv(o: NativeClientOptions): Handle;
	clientNewLocal(local: Handle, o: NativeClientOptions): Handle;
	clientClose(c: Handle): void;
	tokenNew(): Handle;
	tokenCancel(t: Handle): void;
	tokenFree(t: Handle): void;

	claim(c: Handle, template: string, snapshotId: string | null, config: NativeConfig | null): Promise<string>;
	get(c: Handle, id: string): Promise<string>;
	status(c: Handle, id: string): Promise<string>;
	update(c: Handle, id: string, config: NativeConfig): Promise<string>;
	delete(c: Handle, id: string): Promise<void>;
	pause(c: Handle, id: string, memory: 0 | 1 | 2): Promise<{ json: string; httpStatus: number }>;
	resume(c: Handle, id: string, memory: 0 | 1 | 2): Promise<{ json: string; httpStatus: number }>;
	refresh(c: Handle, id: string, durationSec: number): Promise<string>;
	list(c: Handle, o: { status?: number; paused?: number; limit?: number; offset?: number; templateId?: string }):
		Promise<{ items: string[]; count: number; hasMore: boolean }>;
	snapshotCreate(c: Handle, id: string, name: string | null, description: string | null, expiresAtUnixMs: number): Promise<string>;
	snapshotList(c: Handle, id: string): Promise<string[]>;
	snapshotGet(c: Handle, snapshotId: string): Promise<string>;
	snapshotDelete(c: Handle, snapshotId: string): Promise<void>;
	restore(c: Handle, id: string, snapshotId: string): Promise<{ json: string; httpStatus: number }>;
	fork(c: Handle, id: string, o: { ttlSec?: number; hardTtlSec?: number; memory?: boolean; idempotencyKey?: string }): Promise<string>;
	networkPolicyGet(c: Handle, id: string): Promise<string>;
	networkPolicyPut(c: Handle, id: string, policyJson: string): Promise<string>;

	pauseAndWait(c: Handle, id: string, o: NativeWaitOptions, token: Handle | null, onProgress: ProgressHook | null): Promise<string>;
	resumeAndWait(c: Handle, id: string, o: NativeWaitOptions, token: Handle | null, onProgress: ProgressHook | null): Promise<string>;
	wait(c: Handle, id: string, o: NativeWaitOptions, token: Handle | null, onProgress: ProgressHook | null,
		statusMask: number, predicate: PredicateHook | null): Promise<string | null>;

	filesRead(c: Handle, id: string, path: string): Promise<Buffer>;
	filesWrite(c: Handle, id: string, path: string, data: Uint8Array): Promise<void>;
	filesMkdir(c: Handle, id: string, path: string, recursive: boolean): Promise<void>;
	filesDelete(c: Handle, id: string, path: string): Promise<void>;
	filesStat(c: Handle, id: string, path: string): Promise<NativeFileInfo>;
	filesList(c: Handle, id: string, path: string): Promise<NativeFileInfo[]>;
	filesMove(c: Handle, id: string, source: string, destination: string): Promise<void>;
	contextCreate(c: Handle, id: string, requestJson: string): Promise<string>;
	contextExec(c: Handle, id: string, contextId: string, input: string): Promise<string>;
	contextGet(c: Handle, id: string, contextId: string): Promise<string>;
	contextDelete(c: Handle, id: string, contextId: string): Promise<void>;
	runtimeCall(c: Handle, id: string, suffix: string, method: string, body: string | null,
		idempotencyKey: string | null): Promise<{ status: number; json: string }>;

	streamOpen(c: Handle, kind: number, sandboxId: string, id: string | null, after: number,
		onEvent: (type: number, payload: unknown, code: number, reason: string) => void): Promise<Handle>;
	streamSend(s: Handle, json: string): Promise<void>;
	streamClose(s: Handle): void;

	localOpen(dir: string, o: {
		manualClock?: number; manualClockStartUnixMs?: number; disableMemoryCheckpoints?: number;
		maxActiveRuntimes?: number; zeroTimeCompat?: number; teamId?: string;
	}): Promise<Handle>;
	/** null when the backend closed now, else a promise resolved once its last call ended and it closed. */
	localClose(l: Handle): Promise<void> | null;
	clockAdvance(l: Handle, ms: number): Promise<void>;
	quiesce(l: Handle, timeoutMs: number): Promise<void>;
	restartManager(l: Handle): Promise<void>;
	gc(l: Handle): Promise<void>;
	inspect(l: Handle, sandboxId: string | null): Promise<string>;
	templateBuild(l: Handle, name: string, dir: string | null, sizeBytes: number, ephemeralMounts: string[] | null): Promise<void>;
	faultArm(l: Handle, name: string, mode: number, count: number, delayMs: number): void;
	faultRelease(l: Handle, name: string): void;
	nowUnixMs(l: Handle): number;
}

const require = createRequire(import.meta.url);
const defaultPath = fileURLToPath(new URL("../../native/build/sandbox0_napi.node", import.meta.url));

/** The loaded addon. */
export const native: Native = require(process.env.SANDBOX0_ADDON || defaultPath) as Native;
