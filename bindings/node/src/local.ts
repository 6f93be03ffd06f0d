/**
 * The embedded backend: a complete single-node Sandbox0 in this process
 * (simulated runtime, real RootFS and durability), reached through the
 * ordinary Client.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Client } from "./client.js";
import type { ClientOptions } from "./client.js";
import { call, callSync } from "./errors.js";
import { native } from "./native.js";
import type { Handle } from "./native.js";

/** Options of LocalBackend.open. */
export interface LocalBackendOptions {
	/** Run on a manual clock (time moves only via advanceClock and the waits of its clients). */
	manualClock?: boolean | undefined;
	/** Start of the manual clock (default now, never before the directory's latest recorded time). */
	manualClockStart?: Date | undefined;
	/** A deployment without memory checkpoints (memory pauses answer 503). */
	disableMemoryCheckpoints?: boolean | undefined;
	/** Team quota of running sandboxes (default 64). */
	maxActiveRuntimes?: number | undefined;
	/** Emit the zero time instead of null for unset expiries. */
	zeroTimeCompat?: boolean | undefined;
	/** Team of the clients (default "team_local"). */
	teamId?: string | undefined;
}

/** Fault modes of armFault. */
export type FaultMode = "fail" | "hold" | "delay" | "crash";
const FAULT_MODES: Record<FaultMode, number> = { fail: 1, hold: 2, delay: 3, crash: 4 };

/** Options of armFault. */
export interface FaultOptions {
	/** Default "fail". */
	mode?: FaultMode | undefined;
	/** Hits affected (fail, delay); 0 = until released. Default 1. */
	count?: number | undefined;
	/** For "delay": milliseconds on the backend clock. */
	delayMs?: number | undefined;
}

/** An open embedded backend. One process may open a data directory at a time. */
export class LocalBackend {
	private closed = false;
	private readonly clients = new Set<Client>();

	private constructor(private readonly h: Handle, readonly path: string, private readonly tmp: boolean) {}

	/**
	 * Open (creating if needed) a backend on @p dir; without a directory a
	 * temporary one is made and removed by close().
	 * @throws ConflictError reason `data_dir_locked` when another process holds it.
	 */
	static async open(dir?: string, options: LocalBackendOptions = {}): Promise<LocalBackend> {
		const tmp = dir === undefined;
		const path = dir ?? mkdtempSync(join(tmpdir(), "libsandbox0-"));
		try {
			const h = await call(native.localOpen(path, {
				manualClock: options.manualClock ? 1 : 0,
				manualClockStartUnixMs: options.manualClockStart?.getTime() ?? 0,
				disableMemoryCheckpoints: options.disableMemoryCheckpoints ? 1 : 0,
				maxActiveRuntimes: options.maxActiveRuntimes ?? 0,
				zeroTimeCompat: options.zeroTimeCompat ? 1 : 0,
				teamId: options.teamId,
			}));
			return new LocalBackend(h, path, tmp);
		} catch (e) {
			if (tmp)
				rmSync(path, { recursive: true, force: true });
			throw e;
		}
	}

	private get handle(): Handle {
		if (this.closed)
			throw Object.assign(new Error("the local backend is closed"), { code: "ERR_SANDBOX0_CLOSED" });
		return this.h;
	}

	/** A client over this backend (no sockets); closed with the backend. */
	client(options: Pick<ClientOptions, "userAgent"> = {}): Client {
		const c = Client.fromHandle(callSync(() => native.clientNewLocal(this.handle, { userAgent: options.userAgent })));
		this.clients.add(c);
		return c;
	}

	/** Advance the manual clock and run the controllers that became due. */
	async advanceClock(ms: number): Promise<void> {
		await call(native.clockAdvance(this.handle, ms));
	}

	/** The backend clock's current time. */
	now(): Date {
		return new Date(native.nowUnixMs(this.handle));
	}

	/** Wait (real time, up to @p timeoutMs) until no background operation is runnable. */
	async quiesce(timeoutMs = 10_000): Promise<void> {
		await call(native.quiesce(this.handle, timeoutMs));
	}

	/** Simulate a manager restart (lifecycle state reloaded from the metadata store). */
	async restartManager(): Promise<void> {
		await call(native.restartManager(this.handle));
	}

	/** Internal facts as parsed JSON (capacity, operations, generations, memory images…). */
	async inspect(sandboxId?: string): Promise<Record<string, unknown>> {
		return JSON.parse(await call(native.inspect(this.handle, sandboxId ?? null))) as Record<string, unknown>;
	}

	/** Collect unreferenced blocks. */
	async gc(): Promise<void> {
		await call(native.gc(this.handle));
	}

	/** Build (or rebuild) a template from a directory tree (default: an empty standard tree). */
	async buildTemplate(name: string, dir?: string, options: { sizeBytes?: number; ephemeralMounts?: string[] } = {}): Promise<void> {
		await call(native.templateBuild(this.handle, name, dir ?? null, options.sizeBytes ?? 0, options.ephemeralMounts ?? null));
	}

	/** Arm a named fault point (docs/behaviours.md's stand-in table), e.g. `capture@commit`. */
	armFault(name: string, options: FaultOptions = {}): void {
		const mode = FAULT_MODES[options.mode ?? "fail"];
		if (mode === undefined)
			throw new TypeError(`fault mode must be one of ${Object.keys(FAULT_MODES).join(", ")}`);
		callSync(() => native.faultArm(this.handle, name, mode, options.count ?? 1, options.delayMs ?? 0));
	}

	/** Disarm a fault point and release what it holds. */
	releaseFault(name: string): void {
		callSync(() => native.faultRelease(this.handle, name));
	}

	/**
	 * Close the clients made here and the backend; later calls throw.
	 * Calls in flight go on and the backend closes when the last one ends;
	 * a temporary directory is removed then (at once when none is in
	 * flight). The promise resolves once both happened; awaiting it is
	 * optional. Idempotent (later calls resolve at once).
	 */
	close(): Promise<void> {
		if (this.closed)
			return Promise.resolve();
		for (const c of this.clients)
			c.close();
		this.clients.clear();
		const pending = native.localClose(this.h);
		this.closed = true;
		const removeTmp = () => {
			if (this.tmp)
				rmSync(this.path, { recursive: true, force: true });
		};
		if (!pending) {
			removeTmp();
			return Promise.resolve();
		}
		return pending.then(removeTmp);
	}
}
