/**
 * libsandbox0 for Node: the Sandbox0 client (shaped like the official
 * `sandbox0` npm package), the embedded local backend and a UCloud/E2B-style
 * facade, over libsandbox0's C API through a Node-API addon.
 */
export { Client, DEFAULT_BASE_URL, SandboxHandle, Sandboxes } from "./client.js";
export type {
	ClaimSandboxOptions, ClientOptions, CreateRootFSSnapshotRequest, ForkSandboxOptions, ForkSandboxRequest,
	SandboxConfig, SandboxExecutionStateOptions, SandboxListOptions,
} from "./client.js";
export type { SandboxLifecycleWaitOptions } from "./wait.js";
export type {
	FileInfo, LifecycleResponse, NetworkPolicy, Sandbox as SandboxModel, SandboxLifecycleStatus,
	SandboxListResult, SandboxRootFSSnapshot,
} from "./models.js";
export * from "./errors.js";
export { LocalBackend } from "./local.js";
export { BaseStream, ContextStream, FileWatchStream, SessionStream } from "./streams.js";
export type { FileWatchResponse, StreamDone, StreamMessage, StreamOptions, StreamOutput } from "./streams.js";
export type { FaultMode, FaultOptions, LocalBackendOptions } from "./local.js";
export {
	Sandbox, SandboxFiles, SandboxPaginator, claimConfig, setDefaultClient, stateOf,
} from "./facade.js";
export type { SandboxCreateOptions, SandboxInfo, SandboxLifecycle, SandboxQuery, SandboxState } from "./facade.js";
export { native as _native } from "./native.js";

import { native } from "./native.js";

/** Version of the loaded libsandbox0. */
export function libraryVersion(): string {
	return native.version();
}

/** Library objects alive in this process (s0_live_objects; leak checks). */
export function liveObjects(): number {
	return native.liveObjects();
}

/** The addon's thread pool: threads running, calls queued beyond the cap, calls in flight. */
export function threadStats(): { threads: number; queued: number; inflight: number; peakThreads: number; maxThreads: number } {
	return native.poolStats();
}

/** Set the cap of addon threads (1..4096; default 128 or SANDBOX0_NODE_MAX_THREADS); calls beyond it queue. */
export function setMaxThreads(n: number): void {
	native.setMaxThreads(n);
}
