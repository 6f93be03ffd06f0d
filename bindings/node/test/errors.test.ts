// Error classes generated from the C table (one per kind), their hierarchy
// and fields, and bad input refused with clear errors before any request.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import * as pkg from "../src/index.js";
import {
	APIError, CODES, Client, ERROR_CLASSES, InvalidArgumentError, LocalBackend, NotFoundError, Sandbox0Error,
	SandboxLifecycleFailedError, SandboxWaitTimeoutError, TransportError, WIRE_ERRORS, WIRE_REASONS, _native,
} from "../src/index.js";
import { openLocal } from "./helpers.js";

let lb: LocalBackend;
before(async () => { lb = await openLocal({ manualClock: true }); });
after(() => { lb.close(); });

test("the generated tables equal the ones compiled into the addon", () => {
	const t = _native.errorTables();
	assert.deepEqual(CODES.map((r) => [...r]), t.codes);
	assert.deepEqual(WIRE_ERRORS.map((r) => [...r]), t.wire);
	assert.deepEqual(WIRE_REASONS.map((r) => [...r]), t.reasons);
});

test("one exported class per kind of the C table, with the right base", () => {
	const wireCodes = new Set(WIRE_ERRORS.map((r) => r[2]));
	for (const [ident, value, name] of CODES) {
		if (["OK", "ITEROVER", "ERROR"].includes(ident))
			continue;
		if (ident === "ELIFECYCLE") {
			assert.equal(ERROR_CLASSES.get(value), undefined);
			continue;
		}
		const Cls = ERROR_CLASSES.get(value);
		assert.ok(Cls, `class for ${ident}`);
		assert.equal((pkg as Record<string, unknown>)[Cls.name], Cls, `${Cls.name} exported`);
		const e = new Cls("m", { kind: name, s0Code: value, reason: name });
		assert.ok(e instanceof Sandbox0Error && e instanceof Error);
		assert.equal(e.name, Cls.name);
		assert.equal(e instanceof APIError, wireCodes.has(value) || ident === "EPROTOCOL", ident);
	}
	assert.ok(new SandboxWaitTimeoutError("sb", 5) instanceof Sandbox0Error);
	assert.ok(!(new SandboxWaitTimeoutError("sb", 5) instanceof APIError));
	const lf = new SandboxLifecycleFailedError("sb", "memory pause");
	assert.equal(lf.action, "memory pause");
	assert.equal(lf.sandboxId, "sb");
});

test("bad input: clear errors, no call made", async () => {
	const c = lb.client();
	await assert.rejects(c.sandboxes.get(42 as unknown as string), TypeError);
	await assert.rejects(c.sandboxes.get("a\0b"), /NUL/);
	await assert.rejects(c.sandboxes.get(""), InvalidArgumentError);
	await assert.rejects(c.sandboxes.pause("sb", { memory: "yes" as unknown as boolean }), TypeError);
	await assert.rejects(c.sandboxes.list({ limit: 500 }), InvalidArgumentError);
	await assert.rejects(c.sandboxes.waitForLifecycle("sb", 3 as unknown as () => boolean), TypeError);
	assert.throws(() => new Client({ baseUrl: "ftp://x" }), InvalidArgumentError);
	assert.throws(() => new Client({ headers: { "X-A": "b\nc" } }), InvalidArgumentError);
	assert.throws(() => lb.armFault(""), InvalidArgumentError);
	assert.throws(() => lb.armFault("carrier", { mode: "melt" as "fail" }), TypeError);
	c.close();
	await assert.rejects(c.sandboxes.get("sb"), /closed/);
	assert.throws(() => _native.clientClose({} as never), TypeError);
});

test("an unreachable server is a TransportError; a 404 a NotFoundError with its fields", async () => {
	const c = new Client({ baseUrl: "http://127.0.0.1:9", token: "s0_x", connectTimeoutMs: 2000 });
	const e = await c.sandboxes.get("sb_1").then(() => null, (x: unknown) => x);
	assert.ok(e instanceof TransportError, String(e));
	assert.equal(e.statusCode, 0);
	const local = lb.client();
	const nf = await local.sandboxes.get("sb_nope").then(() => null, (x: unknown) => x);
	assert.ok(nf instanceof NotFoundError && nf instanceof APIError);
	assert.equal(nf.statusCode, 404);
	assert.equal(nf.code, "not_found");
	assert.equal(nf.kind, "not_found");
});
