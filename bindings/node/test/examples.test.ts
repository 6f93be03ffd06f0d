// examples/node: `tsc --noEmit --strict` over them, then each compiled and
// run offline against the installed-layout package; and the `npm pack`
// tarball installed into a throwaway project (the addon compiled at
// install time, nothing downloaded) type-checking the snippet of CL-15
// against the packed .d.ts and running it.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { PKG, REPO, startServer } from "./helpers.js";

const EXAMPLES = join(REPO, "examples", "node");
const TSC = join(PKG, "node_modules", "typescript", "bin", "tsc");

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
	return execFileSync(cmd, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 240_000 });
}

test("tsc --noEmit --strict over examples/node", () => {
	run(process.execPath, [TSC, "-p", EXAMPLES, "--noEmit", "--strict"], PKG);
});

test("examples/node run offline and print what they promise", () => {
	const tmp = mkdtempSync(join(tmpdir(), "s0-node-examples-"));
	try {
		mkdirSync(join(tmp, "node_modules"));
		symlinkSync(PKG, join(tmp, "node_modules", "libsandbox0"));
		cpSync(join(EXAMPLES, "package.json"), join(tmp, "package.json"));
		run(process.execPath, [TSC, "-p", EXAMPLES, "--noEmit", "false", "--outDir", tmp], PKG);
		const expect: Record<string, RegExp[]> = {
			"quickstart_local.js": [/^paused at generation 1$/m, /^resumed at generation 2/m, /^file after resume: kept across pause$/m,
				/^as expected: timed out waiting for sandbox \S+ after 1000ms \(last seen running\)$/m],
			"facade_persistence.js": [/^after pause: paused$/m, /^after connect: running, state.json = \{"step":1\}$/m, /^killed: killed$/m],
			"faults_and_errors.js": [/^SandboxLifecycleFailedError: memory pause of \S+; last seen failed, paused=true$/m,
				/^recovered from the committed RootFS: running$/m, /^NotFoundError 404 not_found/m, /^aborted: user pressed stop$/m],
		};
		const built = readdirSync(tmp).filter((f) => f.endsWith(".js")).sort();
		assert.deepEqual(built, Object.keys(expect).sort());
		for (const [file, patterns] of Object.entries(expect)) {
			const out = run(process.execPath, [join(tmp, file)], tmp, { ...process.env, SANDBOX0_BASE_URL: "http://127.0.0.1:9" });
			for (const p of patterns)
				assert.match(out, p, `${file}:\n${out}`);
		}
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
});

const CONSUMER = `import { Client } from "libsandbox0";
const client = new Client({ token: process.env.S0_TOKEN, baseUrl: process.env.S0_URL });
const sandbox = await client.sandboxes.claim("default");
await client.sandboxes.pauseAndWait(sandbox.id, {
memory: true,
timeoutMs: 360_000,
});
await client.sandboxes.resumeAndWait(sandbox.id, {
memory: true,
timeoutMs: 360_000,
});
const after = await client.sandboxes.get(sandbox.id);
console.log(after.status, after.paused, after.runtimeGeneration, after.claimedAt instanceof Date);
`;

test("npm pack tarball installs into a throwaway project (addon built at install) and runs the seed snippet", async () => {
	const tmp = mkdtempSync(join(tmpdir(), "s0-node-pack-"));
	const server = await startServer();
	try {
		const packed = run("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", tmp], PKG).trim().split("\n").at(-1) as string;
		const tarball = join(tmp, packed);
		const files = run("tar", ["-tzf", tarball], tmp);
		for (const f of ["package/dist/src/index.js", "package/dist/src/index.d.ts", "package/native/pool.c", "package/scripts/build-addon.mjs"])
			assert.ok(files.includes(f), `${f} in the tarball`);
		assert.ok(!files.includes("package/native/build/"), "no prebuilt addon in the tarball");
		const app = join(tmp, "app");
		mkdirSync(app);
		writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
		run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", tarball], app);
		// The snippet is TypeScript: type-check it against the installed
		// package's own .d.ts (its "exports" types), as strictly as a user
		// may (library checks on, exactOptionalPropertyTypes: `token:
		// process.env.X` is string | undefined), then run what tsc emits.
		writeFileSync(join(app, "seed.ts"), CONSUMER);
		writeFileSync(join(app, "tsconfig.json"), JSON.stringify({
			compilerOptions: {
				target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true,
				exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, skipLibCheck: false,
				types: ["node"], typeRoots: [join(PKG, "node_modules", "@types")], outDir: ".",
			},
			files: ["seed.ts"],
		}));
		run(process.execPath, [TSC, "-p", app], app);
		const env: NodeJS.ProcessEnv = { ...process.env, S0_URL: server.url, S0_TOKEN: server.token };
		delete env.SANDBOX0_ADDON; // the consumer loads its own addon
		const out = run(process.execPath, ["seed.js"], app, env);
		assert.equal(out, "running false 2 true\n");
	} finally {
		await server.stop();
		rmSync(tmp, { recursive: true, force: true });
	}
});
