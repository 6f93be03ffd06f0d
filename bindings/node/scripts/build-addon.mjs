#!/usr/bin/env node
// Compile the N-API addon (native/*.c) into native/build/sandbox0_napi.node.
//
// Run by `npm install` (the package's "install" script). It downloads
// nothing: the C compiler is `$CC` (default `cc`), libsandbox0 comes from
// `pkg-config sandbox0` (honouring PKG_CONFIG_PATH and
// PKG_CONFIG_SYSROOT_DIR), and the N-API headers are those of the node that
// runs this script (<prefix>/include/node, or $SANDBOX0_NODE_INCLUDE).
// The library directories pkg-config names are recorded as the addon's
// RUNPATH, so a library installed outside the loader's default path loads
// without LD_LIBRARY_PATH.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const nativeDir = join(root, "native");
const outDir = join(nativeDir, "build");
const out = join(outDir, "sandbox0_napi.node");

function fail(msg) {
	console.error(`sandbox0: cannot build the native addon: ${msg}`);
	process.exit(1);
}

function split(flags) {
	return flags.trim().split(/\s+/).filter(Boolean);
}

function pkgConfig(...args) {
	try {
		return execFileSync(process.env.PKG_CONFIG || "pkg-config", [...args, "sandbox0"],
			{ encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
	} catch (e) {
		fail(`pkg-config sandbox0 failed (install libsandbox0, or set PKG_CONFIG_PATH):\n${e.stderr ?? e.message}`);
	}
}

function nodeInclude() {
	const candidates = [process.env.SANDBOX0_NODE_INCLUDE,
		resolve(process.execPath, "..", "..", "include", "node"),
		process.config?.variables?.node_prefix && join(process.config.variables.node_prefix, "include", "node")];
	for (const c of candidates)
		if (c && existsSync(join(c, "node_api.h")))
			return c;
	fail(`node_api.h not found (looked in ${candidates.filter(Boolean).join(", ")}); ` +
		"install the node headers (Debian: libnode-dev) or set SANDBOX0_NODE_INCLUDE");
}

const cflags = split(pkgConfig("--cflags"));
const libs = split(pkgConfig("--libs"));
const rpaths = libs.filter((f) => f.startsWith("-L")).map((f) => `-Wl,-rpath,${f.slice(2)}`);
const sources = readdirSync(nativeDir).filter((f) => f.endsWith(".c")).sort().map((f) => join(nativeDir, f));
mkdirSync(outDir, { recursive: true });
const args = ["-std=c11", "-O2", "-g", "-fPIC", "-shared", "-fvisibility=hidden",
	"-D_GNU_SOURCE", "-DNODE_GYP_MODULE_NAME=sandbox0_napi",
	"-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers",
	`-I${nodeInclude()}`, ...cflags, ...sources, "-o", out, ...libs, ...rpaths, "-pthread"];
const cc = process.env.CC || "cc";
try {
	execFileSync(cc, args, { stdio: "inherit" });
} catch (e) {
	fail(`${cc} failed (${e.status ?? e.message})`);
}
if (!process.env.npm_config_loglevel || process.env.npm_config_loglevel !== "silent")
	console.log(`sandbox0: built ${out}`);
