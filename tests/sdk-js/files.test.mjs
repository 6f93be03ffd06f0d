// The official SDK's files calls against `s0 serve`: writeFile, readFile,
// mkdir, listFiles, statFile, moveFile, deleteFile, their error codes
// (docs/wire.md §3.10) and the runtime-access rules for paused sandboxes (§3.9).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { auditWire, checkTime, expectAPIError, useHarness } from "./helpers.mjs";

const SB = "/api/v1/sandboxes";
const WAIT = { timeoutMs: 30_000, pollIntervalMs: 20 };
const dec = new TextDecoder();

const h = useHarness();

const claim = (options) => h.claim(options);

/** Server-side FileInfo by a plain request. */
async function rawStat(id, path) {
	const r = await h.raw("GET", `${SB}/${id}/files/stat?path=${encodeURIComponent(path)}`);
	return r;
}

/** The SDK's FileInfo equals the wire FileInfo (docs/wire.md §3.9). */
function assertInfoEquals(s, d) {
	assert.equal(typeof d.name, "string");
	assert.equal(typeof d.path, "string");
	assert.ok(["file", "dir", "symlink"].includes(d.type), d.type);
	assert.ok(Number.isInteger(d.size));
	assert.match(d.mode, /^[0-7]{4}$/);
	assert.equal(typeof d.is_link, "boolean", "is_link is always present");
	checkTime(d.mod_time, "mod_time");
	assert.equal(s.name, d.name);
	assert.equal(s.path, d.path);
	assert.equal(s.type, d.type);
	assert.equal(s.size, d.size);
	assert.equal(s.mode, d.mode);
	assert.equal(s.isLink, d.is_link);
	assert.equal(s.linkTarget, d.link_target);
	assert.equal(s.modTime.getTime(), Date.parse(d.mod_time));
}

describe("files", () => {
	test("writeFile / readFile: text and binary round trips", async () => {
		const sb = await claim();
		const box = h.sdk.sandbox(sb.id);
		const w = await box.writeFile("/workspace/hello.txt", "hello, world\n");
		h.wire.expectLast("POST", `${SB}/${sb.id}/files`, 200);
		assert.deepEqual({ ...w }, { success: true, data: { written: true } });
		const back = await box.readFile("/workspace/hello.txt");
		h.wire.expectLast("GET", `${SB}/${sb.id}/files`, 200);
		assert.ok(back instanceof Uint8Array);
		assert.equal(dec.decode(back), "hello, world\n");
		/* the server holds the same bytes */
		const raw = await h.raw("GET", `${SB}/${sb.id}/files?path=/workspace/hello.txt`);
		assert.equal(raw.status, 200);
		assert.equal(raw.headers.get("content-type"), "application/octet-stream");
		assert.equal(raw.text, "hello, world\n");

		const bin = new Uint8Array(70_000);
		for (let i = 0; i < bin.length; i++)
			bin[i] = (i * 131 + 7) & 0xff;
		await box.writeFile("/workspace/deep/er/blob.bin", bin);
		assert.deepEqual(await box.readFile("/workspace/deep/er/blob.bin"), bin);
		const st = await box.statFile("/workspace/deep/er/blob.bin");
		assert.equal(st.size, bin.length);
		assert.equal(st.type, "file");
		assert.equal(st.mode, "0644");

		await box.writeFile("/workspace/empty", new Uint8Array(0));
		assert.equal((await box.readFile("/workspace/empty")).length, 0);
		/* relative paths resolve against the workspace root */
		await box.writeFile("rel.txt", "relative");
		assert.equal(dec.decode(await box.readFile("rel.txt")), "relative");
	});

	test("mkdir, listFiles, statFile", async () => {
		const sb = await claim();
		const box = h.sdk.sandbox(sb.id);
		const m = await box.mkdir("/workspace/dir");
		h.wire.expectLast("POST", `${SB}/${sb.id}/files`, 201);
		assert.equal(m.success, true);
		await expectAPIError(() => box.mkdir("/workspace/dir"), 409, "path_exists");
		await box.mkdir("/workspace/dir", true); /* recursive on an existing dir: fine */
		await box.mkdir("/workspace/a/b/c", true);
		h.wire.expectLast("POST", `${SB}/${sb.id}/files`, 201);
		/* a missing parent without recursive: 404 (docs/wire.md §3.10 names no code for it) */
		await expectAPIError(() => box.mkdir("/workspace/x/y/z"), 404,
			["directory_not_found", "file_not_found"]);
		await box.writeFile("/workspace/dir/one.txt", "1");
		await box.writeFile("/workspace/dir/two.txt", "22");

		const st = await box.statFile("/workspace/dir");
		h.wire.expectLast("GET", `${SB}/${sb.id}/files/stat`, 200);
		const raw = await rawStat(sb.id, "/workspace/dir");
		assert.equal(raw.status, 200);
		assertInfoEquals(st, raw.json.data);
		assert.equal(st.type, "dir");
		assert.equal(st.name, "dir");
		assert.equal(st.path, "/workspace/dir");

		const entries = await box.listFiles("/workspace/dir");
		h.wire.expectLast("GET", `${SB}/${sb.id}/files/list`, 200);
		const rawList = (await h.raw("GET", `${SB}/${sb.id}/files/list?path=/workspace/dir`)).json.data;
		assert.equal(entries.length, rawList.entries.length);
		entries.forEach((e, i) => assertInfoEquals(e, rawList.entries[i]));
		const byName = Object.fromEntries(entries.map((e) => [e.name, e]));
		assert.deepEqual(Object.keys(byName).sort(), ["one.txt", "two.txt"]);
		assert.equal(byName["two.txt"].size, 2);
		assert.equal(byName["one.txt"].path, "/workspace/dir/one.txt");

		assert.deepEqual(await box.listFiles("/workspace/a/b/c"), [], "empty dir: []");
		await expectAPIError(() => box.listFiles("/workspace/nope"), 404, "directory_not_found");
		await expectAPIError(() => box.listFiles("/workspace/dir/one.txt"), 409, "path_not_directory");
		await expectAPIError(() => box.statFile("/workspace/nope"), 404, "file_not_found");
		await expectAPIError(() => box.readFile("/workspace/dir"), 409, "path_not_file");
		await expectAPIError(() => box.readFile("/workspace/nope"), 404, "file_not_found");
		await expectAPIError(() => box.writeFile("/workspace/dir", "x"), 409, "path_not_file");
	});

	test("moveFile and deleteFile", async () => {
		const sb = await claim();
		const box = h.sdk.sandbox(sb.id);
		await box.writeFile("/workspace/src.txt", "moving");
		const mv = await box.moveFile("/workspace/src.txt", "/workspace/moved/dst.txt");
		h.wire.expectLast("POST", `${SB}/${sb.id}/files/move`, 200);
		assert.deepEqual({ ...mv }, { success: true, data: { moved: true } });
		assert.equal((await rawStat(sb.id, "/workspace/src.txt")).status, 404);
		assert.equal(dec.decode(await box.readFile("/workspace/moved/dst.txt")), "moving");
		await expectAPIError(() => box.moveFile("/workspace/src.txt", "/workspace/x"), 404,
			"file_not_found");
		await expectAPIError(() => box.moveFile("", "/workspace/x"), 400, "invalid_paths");

		const del = await box.deleteFile("/workspace/moved/dst.txt");
		h.wire.expectLast("DELETE", `${SB}/${sb.id}/files`, 200);
		assert.deepEqual({ ...del }, { success: true, data: { deleted: true } });
		assert.equal((await rawStat(sb.id, "/workspace/moved/dst.txt")).status, 404);
		await box.writeFile("/workspace/tree/a/b.txt", "b");
		await box.deleteFile("/workspace/tree"); /* recursive */
		assert.equal((await rawStat(sb.id, "/workspace/tree")).status, 404);
		await box.deleteFile("/workspace/never-existed"); /* a missing path succeeds */
	});

	test("files survive pause/resume; /tmp does not (docs/wire.md §6.8)", async () => {
		const sb = await claim();
		const box = h.sdk.sandbox(sb.id);
		await box.writeFile("/workspace/keep.txt", "kept");
		await box.writeFile("/tmp/scratch.txt", "ephemeral");
		await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		await h.sdk.sandboxes.resumeAndWait(sb.id, WAIT);
		assert.equal(dec.decode(await box.readFile("/workspace/keep.txt")), "kept");
		await expectAPIError(() => box.statFile("/tmp/scratch.txt"), 404, "file_not_found");
	});

	test("a paused sandbox with auto_resume wakes up for a file request", async () => {
		const sb = await claim();
		const box = h.sdk.sandbox(sb.id);
		await box.writeFile("/workspace/w.txt", "wake");
		const p = await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		assert.equal(dec.decode(await box.readFile("/workspace/w.txt")), "wake");
		const d = await h.state(sb.id);
		assert.equal(d.status, "running");
		assert.equal(d.paused, false);
		assert.equal(d.runtime_generation, p.runtimeGeneration + 1);
	});

	test("a paused sandbox without auto_resume: APIError 503 unavailable", async () => {
		const sb = await claim({ autoResume: false });
		const box = h.sdk.sandbox(sb.id);
		await box.writeFile("/workspace/w.txt", "asleep");
		const p = await h.sdk.sandboxes.pauseAndWait(sb.id, WAIT);
		await expectAPIError(() => box.readFile("/workspace/w.txt"), 503, "unavailable",
			/^sandbox is not running and auto_resume is disabled$/);
		await expectAPIError(() => box.writeFile("/workspace/w.txt", "x"), 503, "unavailable");
		const d = await h.state(sb.id);
		assert.equal(d.status, "paused");
		assert.equal(d.runtime_generation, p.runtimeGeneration);
		await h.sdk.sandboxes.resumeAndWait(sb.id, WAIT);
		assert.equal(dec.decode(await box.readFile("/workspace/w.txt")), "asleep");
	});

	test("files of an unknown sandbox: APIError 404 not_found", async () => {
		const box = h.sdk.sandbox("sb_doesnotexist");
		await expectAPIError(() => box.readFile("/workspace/x"), 404, "not_found");
		await expectAPIError(() => box.writeFile("/workspace/x", "x"), 404, "not_found");
		await expectAPIError(() => box.listFiles("/workspace"), 404, "not_found");
	});
});

test("wire audit: every response the SDK saw (docs/wire.md §2.1, §3.0)", () => {
	auditWire(h.wire.seen);
});
