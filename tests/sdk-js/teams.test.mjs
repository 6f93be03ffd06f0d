// Two teams through the official SDK against `s0 serve`: keys made with
// `s0 serve keys create` while the server runs (through its admin
// endpoint), each team sees only its own sandboxes, snapshots and
// templates (404 for the other's), a key sent with another team's
// X-Team-ID answers 401 "not a member of selected team", a revoked key 401,
// and templates are created, listed, got, claimed from and deleted as the
// SDK's Templates resource does it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";

import { Client } from "sandbox0";

import { expectAPIError, useHarness } from "./helpers.mjs";

const run = promisify(execFile);
const h = useHarness();

/** `s0 serve keys … -o json` on the harness's data directory (the server holds it). */
async function keys(...args) {
	const { stdout } = await run(process.env.S0_BIN,
		["serve", "keys", "--data", h.server.data, ...args, "-o", "json"]);
	return JSON.parse(stdout);
}

const teams = {};
const client = (key, headers) => new Client({ token: key, baseUrl: h.server.url, headers });

/* The two teams' keys, made once the harness's server runs (first use). */
let made = null;
function ready() {
	made ??= (async () => {
		for (const name of ["alpha", "beta"]) {
			const k = await keys("create", "--team", name, "--name", `${name}-ci`);
			assert.equal(k.team_id, name);
			assert.equal(k.name, `${name}-ci`);
			assert.match(k.key, /^s0_[a-z0-9]{40}$/);
			teams[name] = { key: k.key, id: k.id, sdk: client(k.key) };
		}
	})();
	return made;
}

describe("two teams", () => {
	const claimed = [];
	before(ready);
	after(async () => {
		for (const [team, id] of claimed)
			await teams[team].sdk.sandboxes.delete(id).catch(() => {});
	});

	test("each team sees only its own sandboxes and snapshots", async () => {
		const a = await teams.alpha.sdk.sandboxes.claim("default");
		claimed.push(["alpha", a.id]);
		const b = await teams.beta.sdk.sandboxes.claim("default");
		claimed.push(["beta", b.id]);
		const got = await teams.alpha.sdk.sandboxes.get(a.id);
		assert.equal(got.teamId, "alpha");
		await expectAPIError(() => teams.beta.sdk.sandboxes.get(a.id), 404, "not_found");
		await expectAPIError(() => teams.alpha.sdk.sandboxes.delete(b.id), 404, "not_found");
		await expectAPIError(() => teams.beta.sdk.sandbox(a.id).readFile("/workspace/x"), 404,
			"not_found");
		const listed = await teams.beta.sdk.sandboxes.list();
		assert.deepEqual(listed.sandboxes.map((s) => s.id), [b.id]);
		const snap = await teams.alpha.sdk.sandboxes.createRootFSSnapshot(a.id, { name: "s" });
		await expectAPIError(() => teams.beta.sdk.sandboxes.getRootFSSnapshot(snap.id), 404,
			"not_found");
		await expectAPIError(() => teams.beta.sdk.sandboxes.restoreRootFS(b.id,
			{ snapshotId: snap.id }), 404, "not_found");
	});

	test("a key sent with another team's X-Team-ID answers 401", async () => {
		const aAsBeta = client(teams.alpha.key, { "X-Team-ID": "beta" });
		await expectAPIError(() => aAsBeta.sandboxes.list(), 401, "unauthorized",
			/not a member of selected team/);
		const aAsAlpha = client(teams.alpha.key, { "X-Team-ID": "alpha" });
		assert.ok(Array.isArray((await aAsAlpha.sandboxes.list()).sandboxes));
	});

	test("the admin endpoint takes no team key", async () => {
		const r = await h.raw("GET", "/admin/v1/api-keys", { token: teams.alpha.key });
		assert.equal(r.status, 401);
		assert.match(r.json.error.message, /admin credential/);
	});
});

describe("templates of a team", () => {
	before(ready);
	test("create, list, get, claim, delete; the other team sees none of it", async () => {
		const A = teams.alpha.sdk.templates, B = teams.beta.sdk.templates;
		const t = await A.create({ templateId: "alpha-py",
			spec: { description: "python", pod: { emptyDirMounts: [{ mountPath: "/cache" }] } } });
		assert.equal(t.templateId, "alpha-py");
		assert.equal(t.scope, "team");
		assert.equal(t.teamId, "alpha");
		assert.equal(t.spec.description, "python");
		assert.ok(t.createdAt instanceof Date && !Number.isNaN(t.createdAt.getTime()));
		assert.equal((await A.waitUntilReady("alpha-py", { timeoutMs: 5000 })).templateId,
			"alpha-py");
		assert.deepEqual((await A.list()).map((x) => x.templateId).sort(), ["alpha-py", "default"]);
		assert.deepEqual((await B.list()).map((x) => x.templateId), ["default"]);
		assert.equal((await A.get("alpha-py")).spec.pod.emptyDirMounts[0].mountPath, "/cache");
		await expectAPIError(() => B.get("alpha-py"), 404, "not_found");
		await expectAPIError(() => B.delete("alpha-py"), 404, "not_found");
		await expectAPIError(() => teams.beta.sdk.sandboxes.claim("alpha-py"), 404, "not_found");
		await expectAPIError(() => B.create({ templateId: "alpha-py", spec: {} }), 409,
			"conflict", /already exists/);

		const sb = await teams.alpha.sdk.sandboxes.claim("alpha-py");
		await expectAPIError(() => A.delete("alpha-py"), 409, "conflict", /used by 1/);
		await teams.alpha.sdk.sandboxes.delete(sb.id);
		const gone = await A.delete("alpha-py");
		assert.equal(gone.success, true);
		await expectAPIError(() => A.get("alpha-py"), 404, "not_found");
		await expectAPIError(() => A.delete("default"), 403, "forbidden");
	});
});

describe("revocation", () => {
	before(ready);
	test("a revoked key answers 401 at once", async () => {
		const k = await keys("create", "--team", "gamma");
		const g = client(k.key);
		assert.deepEqual((await g.sandboxes.list()).sandboxes, []);
		const listed = await keys("list", "--team", "gamma");
		assert.equal(listed.count, 1);
		assert.equal(listed.api_keys[0].id, k.id);
		assert.equal(listed.api_keys[0].key, undefined, "list shows no secret");
		const revoked = await keys("revoke", k.id);
		assert.equal(revoked.is_active, false);
		await expectAPIError(() => g.sandboxes.list(), 401, "unauthorized", /invalid token/);
		await assert.rejects(keys("revoke", "key_doesnotexist"), /not found/);
		await assert.rejects(keys("create", "--team", ""), /--team is required/);
	});
});
