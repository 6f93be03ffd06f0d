#!/usr/bin/env node
// Generate src/errors.generated.ts from the X-macro tables of error.h:
//
//   node scripts/gen-errors.mjs include/sandbox0/error.h src/errors.generated.ts
//
// One error class per library code (S0_CODE_MAP), named like the Python
// package's classes; codes with wire rows (and EPROTOCOL, which always comes
// from an HTTP answer) extend APIError, the others Sandbox0Error. ELIFECYCLE
// maps to the hand-written SandboxLifecycleFailedError. The tables are
// emitted too, and a test compares them with the ones compiled into the
// addon, so the classes cannot drift from the C taxonomy.
import { readFileSync, writeFileSync } from "node:fs";

const NAMES = {
	ENOMEM: "OutOfMemoryError", EINVAL: "InvalidArgumentError", EUNSUPPORTED: "UnsupportedError",
	ECANCELED: "CanceledError", EUSER: "UserAbortError", ENOTFOUND: "NotFoundError",
	ECONFLICT: "ConflictError", EUNAVAILABLE: "UnavailableError", ETHROTTLED: "ThrottledError",
	EQUOTA: "QuotaExceededError", ETIMEDOUT: "RequestTimeoutError", EAUTH: "AuthError",
	EFORBIDDEN: "ForbiddenError", ETOOLARGE: "TooLargeError", EGONE: "GoneError",
	ERESUME: "ResumeFailedError", EMEMCAPTURE: "MemoryCaptureError", ETRANSPORT: "TransportError",
	EPROTOCOL: "ProtocolError", EINTERNAL: "InternalError", EIO: "StorageIOError",
	ECORRUPT: "CorruptError", ENOSPACE: "NoSpaceError",
};
const NO_CLASS = new Set(["OK", "ITEROVER", "ERROR"]);
const HAND_WRITTEN = { ELIFECYCLE: "SandboxLifecycleFailedError" };
const API_WITHOUT_WIRE_ROWS = new Set(["EPROTOCOL"]);

const [src, dst] = process.argv.slice(2);
if (!src || !dst) {
	console.error("usage: gen-errors.mjs ERROR_H OUTPUT_TS");
	process.exit(2);
}
const text = readFileSync(src, "utf8");
function body(name) {
	const m = text.match(new RegExp(`#define\\s+${name}\\(X\\)((?:[^\\n]*\\\\\\n)*[^\\n]*)`));
	if (!m)
		throw new Error(`gen-errors: ${name} not found in ${src}`);
	return m[1].replace(/\\\n/g, " ");
}
const codes = [...body("S0_CODE_MAP").matchAll(/X\(\s*(\w+)\s*,\s*(-?\d+)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*\)/g)]
	.map((m) => [m[1], Number(m[2]), m[3], m[4]]);
const wire = [...body("S0_WIRE_ERROR_MAP").matchAll(/X\(\s*"([^"]*)"\s*,\s*(\d+)\s*,\s*S0_(\w+)\s*,\s*"([^"]*)"\s*\)/g)]
	.map((m) => [m[1], Number(m[2]), m[3], m[4]]);
const reasons = [...body("S0_WIRE_REASON_MAP").matchAll(/X\(\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*\)/g)]
	.map((m) => [m[1], m[2], m[3]]);
if (!codes.length || !wire.length)
	throw new Error("gen-errors: empty table");
const value = Object.fromEntries(codes.map(([i, v]) => [i, v]));
for (const [w, , c] of wire)
	if (!(c in value))
		throw new Error(`gen-errors: wire row ${w} names unknown code S0_${c}`);

const className = (ident, name) => NAMES[ident] ??
	name.split("_").map((p) => p[0].toUpperCase() + p.slice(1)).join("") + "Error";
const q = JSON.stringify;
const out = [];
const emit = (s = "") => out.push(s);
emit("// Generated from include/sandbox0/error.h by scripts/gen-errors.mjs; do not edit.");
emit('import { APIError, Sandbox0Error } from "./errorbase.js";');
emit('import type { ErrorFields } from "./errorbase.js";');
emit("");
emit("/** S0_CODE_MAP rows: [ident, value, name, description]. */");
emit("export const CODES: ReadonlyArray<readonly [string, number, string, string]> = [");
for (const [i, v, n, d] of codes)
	emit(`\t[${q(i)}, ${v}, ${q(n)}, ${q(d)}],`);
emit("];");
emit("/** S0_WIRE_ERROR_MAP rows: [wire code, HTTP status, code value, reason]. */");
emit("export const WIRE_ERRORS: ReadonlyArray<readonly [string, number, number, string]> = [");
for (const [w, s, c, r] of wire)
	emit(`\t[${q(w)}, ${s}, ${value[c]}, ${q(r)}],`);
emit("];");
emit("/** S0_WIRE_REASON_MAP rows: [wire code, message substring, reason]. */");
emit("export const WIRE_REASONS: ReadonlyArray<readonly [string, string, string]> = [");
for (const [w, m, r] of reasons)
	emit(`\t[${q(w)}, ${q(m)}, ${q(r)}],`);
emit("];");
emit("");
emit("/** Library codes (s0_code). */");
emit("export const Code = {");
for (const [i, v] of codes)
	emit(`\t${i}: ${v},`);
emit("} as const;");
const classes = [];
for (const [i, v, n, d] of codes) {
	if (NO_CLASS.has(i))
		continue;
	if (HAND_WRITTEN[i])
		continue; /* made by errors.ts with its own constructor */
	const cname = className(i, n);
	const rows = wire.filter((r) => r[2] === i);
	const base = rows.length || API_WITHOUT_WIRE_ROWS.has(i) ? "APIError" : "Sandbox0Error";
	emit("");
	emit("/**");
	emit(` * ${d[0].toUpperCase() + d.slice(1)}: library code \`${i}\` (${v}), kind \`${n}\`.`);
	if (rows.length) {
		emit(" *");
		emit(" * Raised for these wire errors (code, HTTP status → reason):");
		for (const [w, s, , r] of rows)
			emit(` * - \`${w}\` ${s} → \`${r}\``);
	}
	emit(" */");
	emit(`export class ${cname} extends ${base} {`);
	emit(`\tconstructor(message: string, fields: ErrorFields) {`);
	emit(`\t\tsuper(message, fields);`);
	emit(`\t\tthis.name = ${q(cname)};`);
	emit("\t}");
	emit("}");
	classes.push([v, cname]);
}
emit("");
emit("/** The class of each library code (codes without one use Sandbox0Error). */");
emit("export const ERROR_CLASSES: ReadonlyMap<number, new (message: string, fields: ErrorFields) => Sandbox0Error> = new Map<number, new (message: string, fields: ErrorFields) => Sandbox0Error>([");
for (const [v, c] of classes)
	emit(`\t[${v}, ${c}],`);
emit("]);");
writeFileSync(dst, out.join("\n") + "\n");
