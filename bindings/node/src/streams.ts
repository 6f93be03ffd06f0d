/**
 * Streams over the C library's stream API (sandbox0/streams.h): a
 * context's output and input (`connectWsContext`, `cmdStream`), a
 * supervised session's events (`attachSession`), file changes
 * (`watchFiles`) — shaped like the official `sandbox0` package's
 * ContextStream and FileWatchStream. The same calls work on an HTTP client
 * (a WebSocket to the server) and on a LocalBackend client (in process).
 *
 * Messages are the JSON objects of docs/wire.md §8.2 with camelCase keys
 * (`requestId`, `exitCode`, `watchId`), delivered in order from the addon's
 * reader thread through a threadsafe function. A stream is an async
 * iterable of them; it ends when the server ends it (`closeCode` 1000 the
 * process exited, 1001 the sandbox paused or was deleted) or on `close()`.
 * An open stream keeps the event loop alive like a socket; after `close()`
 * nothing does (the reader thread stops within 50 ms). An AbortSignal
 * closes the stream and rejects pending reads with `signal.reason`.
 */
import { call, toError } from "./errors.js";
import { camelize, snakeize } from "./models.js";
import type { Handle } from "./native.js";
import { native } from "./native.js";

/** A message of a stream (camelCase keys). */
export type StreamMessage = Record<string, unknown> & { type?: string };

/** One output chunk of a context (the official StreamOutput). */
export interface StreamOutput {
	sandboxId: string;
	contextId: string;
	source: string;
	data: string;
}

/** A context's `done` (per input with `requestId`, or terminal with `exitCode`, `state`). */
export interface StreamDone {
	sandboxId: string;
	contextId: string;
	requestId?: string;
	exitCode?: number;
	state?: string;
}

/** A file watch message (the official FileWatchResponse). */
export interface FileWatchResponse {
	type: string;
	watchId?: string;
	event?: string;
	path?: string;
	error?: string;
}

/** Options of the stream calls. */
export interface StreamOptions {
	/** Aborting closes the stream; reads in progress reject with its reason. */
	signal?: AbortSignal;
}

const KIND_CONTEXT = 1;
const KIND_SESSION = 2;
const KIND_FILES_WATCH = 3;
const EV_MESSAGE = 1;
const EV_END = 2;

type Waiter = { resolve: (r: IteratorResult<StreamMessage>) => void; reject: (e: unknown) => void };

/** What every stream does: the queue between the addon and the reader. */
export class BaseStream implements AsyncIterable<StreamMessage> {
	#handle: Handle | undefined;
	#queue: StreamMessage[] = [];
	#waiters: Waiter[] = [];
	#ended = false;
	#failure: unknown;
	#closeCode = 0;
	#closeReason = "";
	#signal: AbortSignal | undefined;
	#onAbort = (): void => this.#abort();
	#onClose: Array<() => void> = [];

	/** @internal */
	constructor(signal: AbortSignal | undefined) {
		this.#signal = signal;
		signal?.addEventListener("abort", this.#onAbort, { once: true });
	}

	/** @internal the addon's callback */
	readonly onEvent = (type: number, payload: unknown, code: number, reason: string): void => {
		if (this.#ended)
			return;
		if (type === EV_MESSAGE) {
			this.#push(camelize(JSON.parse(payload as string)) as StreamMessage);
			return;
		}
		if (type === EV_END) {
			this.#closeCode = code;
			this.#closeReason = reason;
		} else {
			this.#failure = toError(payload);
		}
		this.#finish();
	};

	/** @internal */
	attach(h: Handle): void {
		this.#handle = h;
		if (this.#ended)
			native.streamClose(h);
	}

	/** @internal run when the stream ends or is closed */
	onClose(f: () => void): void {
		this.#onClose.push(f);
	}

	#push(m: StreamMessage): void {
		if (this.handleMessage(m))
			return;
		const w = this.#waiters.shift();
		if (w)
			w.resolve({ value: m, done: false });
		else
			this.#queue.push(m);
	}

	/** @internal a subclass's look at each message, in order; true keeps it out of the iteration */
	protected handleMessage(_m: StreamMessage): boolean {
		return false;
	}

	#finish(): void {
		if (this.#ended)
			return;
		this.#ended = true;
		this.#signal?.removeEventListener("abort", this.#onAbort);
		if (this.#handle)
			native.streamClose(this.#handle);
		for (const w of this.#waiters.splice(0)) {
			if (this.#failure !== undefined)
				w.reject(this.#failure);
			else
				w.resolve({ value: undefined, done: true });
		}
		for (const f of this.#onClose.splice(0))
			f();
		this.ended();
	}

	/** @internal a subclass's hook when the stream ends */
	protected ended(): void {}

	#abort(): void {
		if (this.#ended)
			return;
		this.#failure = this.#signal?.reason ?? Object.assign(new Error("stream aborted"), { name: "AbortError" });
		this.#queue.length = 0;
		this.#finish();
	}

	/**
	 * The next message; `null` once the stream has ended (its messages all
	 * read). Rejects with the stream's failure (an abort's reason, a backend
	 * error).
	 */
	async next(): Promise<StreamMessage | null> {
		const r = await this.#read();
		return r.done ? null : r.value;
	}

	#read(): Promise<IteratorResult<StreamMessage>> {
		const m = this.#queue.shift();
		if (m)
			return Promise.resolve({ value: m, done: false });
		if (this.#ended)
			return this.#failure !== undefined
				? Promise.reject(this.#failure)
				: Promise.resolve({ value: undefined, done: true });
		return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
	}

	/** Every message in order until the stream ends (`break` does not close it). */
	async *messages(): AsyncGenerator<StreamMessage> {
		for (;;) {
			const r = await this.#read();
			if (r.done)
				return;
			yield r.value;
		}
	}

	[Symbol.asyncIterator](): AsyncIterator<StreamMessage> {
		return this.messages();
	}

	/**
	 * Send one client message (camelCase keys are sent snake_cased).
	 * @throws GoneError `stream_closed` once the stream has ended.
	 */
	async send(message: Record<string, unknown>): Promise<void> {
		if (!this.#handle)
			throw new Error("the stream is not open yet");
		// an ended stream answers GoneError (stream_closed) from the addon
		await call(native.streamSend(this.#handle, JSON.stringify(snakeize(message))));
	}

	/** RFC 6455 close code: 0 while open or after close(), 1000 the process exited, 1001 the sandbox paused or was deleted. */
	get closeCode(): number {
		return this.#closeCode;
	}

	/** Why the server ended the stream ("process exited", "sandbox paused"…); "" when none. */
	get closeReason(): string {
		return this.#closeReason;
	}

	/** Whether the stream has ended or was closed. */
	get closed(): boolean {
		return this.#ended;
	}

	/** Detach (the process goes on); pending reads end. Idempotent. */
	close(): void {
		this.#queue.length = 0;
		this.#finish();
	}
}

/** A context's stream (the official ContextStream's methods). */
export class ContextStream extends BaseStream {
	/** Resolved by the terminal `done` (the process exited); rejected if the stream ends first. */
	readonly done: Promise<StreamDone>;
	#resolveDone!: (d: StreamDone) => void;
	#rejectDone!: (e: unknown) => void;

	/** @internal */
	constructor(readonly sandboxId: string, readonly contextId: string, signal: AbortSignal | undefined) {
		super(signal);
		this.done = new Promise<StreamDone>((res, rej) => {
			this.#resolveDone = res;
			this.#rejectDone = rej;
		});
		this.done.catch(() => undefined); // unobserved: no unhandled rejection
	}

	/** The context's id. */
	get id(): string {
		return this.contextId;
	}

	protected override handleMessage(m: StreamMessage): boolean {
		if (m.type === "done" && m.exitCode !== undefined)
			this.#resolveDone({ ...(m as object), sandboxId: this.sandboxId, contextId: this.contextId } as StreamDone);
		return false;
	}

	protected override ended(): void {
		this.#rejectDone(new Error(`the stream ended before the process (${this.closeCode} ${this.closeReason})`));
	}

	/** Write to the process's stdin; with `requestId` a `done` follows the output it made. */
	sendInput(data: string, requestId?: string): Promise<void> {
		return this.send(requestId === undefined ? { type: "input", data } : { type: "input", data, requestId });
	}

	/** Resize the PTY. */
	sendResize(rows: number, cols: number): Promise<void> {
		return this.send({ type: "resize", rows, cols });
	}

	/** Send a signal by name ("INT", "TERM", "KILL"…). */
	sendSignal(signal: string): Promise<void> {
		return this.send({ type: "signal", signal });
	}

	/** Output chunks only, until the stream ends. */
	async *outputs(): AsyncGenerator<StreamOutput> {
		for await (const m of this.messages())
			if (m.type === "output")
				yield { sandboxId: this.sandboxId, contextId: this.contextId, source: String(m.source), data: String(m.data) };
	}

	/** The terminal `done` (see `done`). */
	wait(): Promise<StreamDone> {
		return this.done;
	}
}

/** A supervised session's events from a cursor (`{type: "event", event: {seq, …}}`), acks and errors. */
export class SessionStream extends BaseStream {
	/** Write to the session's stdin (`inputId` makes a retry idempotent). */
	sendInput(data: Uint8Array | string, o: { inputId: string; eof?: boolean; expectedAttemptId?: string; requestId?: string }): Promise<void> {
		const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
		const m: Record<string, unknown> = { type: "input", inputId: o.inputId };
		if (bytes.length)
			m.dataBase64 = bytes.toString("base64");
		if (o.eof)
			m.eof = true;
		if (o.expectedAttemptId !== undefined)
			m.expectedAttemptId = o.expectedAttemptId;
		if (o.requestId !== undefined)
			m.requestId = o.requestId;
		return this.send(m);
	}

	/** Signal the session's process. */
	sendSignal(signal: string, requestId?: string): Promise<void> {
		return this.send(requestId === undefined ? { type: "signal", signal } : { type: "signal", signal, requestId });
	}

	/** The session events (the `event` members), until the stream ends. */
	async *events(): AsyncGenerator<Record<string, unknown>> {
		for await (const m of this.messages())
			if (m.type === "event")
				yield m.event as Record<string, unknown>;
	}
}

/** File changes (the official FileWatchStream). */
export class FileWatchStream extends BaseStream {
	/** The id of the last confirmed subscription. */
	watchId?: string;
	#replies: Array<{ want: string; resolve: (m: StreamMessage) => void; reject: (e: unknown) => void }> = [];

	/** A reply to subscribe()/unsubscribe() settles that call and stays out of the iteration. */
	protected override handleMessage(m: StreamMessage): boolean {
		if (m.type !== "subscribed" && m.type !== "unsubscribed" && m.type !== "error")
			return false;
		const r = this.#replies.shift();
		if (!r)
			return false;
		if (m.type === r.want)
			r.resolve(m);
		else
			r.reject(Object.assign(new Error(`watch refused: ${typeof m.error === "string" ? m.error : JSON.stringify(m.error ?? m)}`),
				{ reason: "watch_refused" }));
		return true;
	}

	protected override ended(): void {
		for (const r of this.#replies.splice(0))
			r.reject(new Error(`the stream ended (${this.closeCode} ${this.closeReason})`));
	}

	#request(want: string, message: Record<string, unknown>): Promise<StreamMessage> {
		const p = new Promise<StreamMessage>((resolve, reject) => this.#replies.push({ want, resolve, reject }));
		p.catch(() => undefined); // the reply may come before send() resolves; handled below
		return this.send(message).then(() => p, (e) => {
			this.#replies.pop();
			throw e;
		});
	}

	/** Watch a path; resolves with the watch id once the server confirmed. */
	async subscribe(path: string, recursive = false): Promise<string> {
		const m = await this.#request("subscribed", { action: "subscribe", path, recursive });
		this.watchId = String(m.watchId);
		return this.watchId;
	}

	/** Stop a subscription (the stream stays open). */
	async unsubscribe(watchId: string): Promise<void> {
		await this.#request("unsubscribed", { action: "unsubscribe", watchId });
	}

	/** The messages (events, errors; not the subscription replies) until the stream ends. */
	async *events(): AsyncGenerator<FileWatchResponse> {
		for await (const m of this.messages())
			if (m.type === "event" || m.type === "error")
				yield m as unknown as FileWatchResponse;
	}
}

/** @internal open a stream of @p kind on client handle @p h */
export async function openStream<S extends BaseStream>(h: Handle, kind: number, sandboxId: string, id: string | null,
	after: number, s: S, signal: AbortSignal | undefined): Promise<S> {
	signal?.throwIfAborted();
	const handle = await call(native.streamOpen(h, kind, sandboxId, id, after, s.onEvent));
	s.attach(handle);
	if (signal?.aborted) {
		s.close();
		throw signal.reason;
	}
	return s;
}

export { KIND_CONTEXT, KIND_FILES_WATCH, KIND_SESSION };
