// Time client.sandboxes.get through the Node package (bindings/node, built):
//   node bench_get.mjs PACKAGE_DIR URL TOKEN SANDBOX_ID N
// Prints "node_us <median microseconds per call>" over 9 rounds after a
// warm-up round, and "node_cpu <this process's CPU microseconds per call>"
// (bench/client/run.sh).
import { createRequire } from "node:module";
import path from "node:path";

const [pkg, url, token, id, nArg] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { Client } = require(path.resolve(pkg));
const n = Math.max(10, Number(nArg) || 0);
const rounds = 9;
const per = Math.floor(n / rounds);
const c = new Client({ token, baseUrl: url });
const us = [];
let cpu = 0; // this process's CPU (all threads, user + system), microseconds
for (let r = -1; r < rounds; r++) {
	const t0 = process.hrtime.bigint();
	const u0 = process.cpuUsage();
	for (let i = 0; i < per; i++) await c.sandboxes.get(id);
	const u = process.cpuUsage(u0);
	if (r >= 0) {
		us.push(Number(process.hrtime.bigint() - t0) / 1e3 / per);
		cpu += u.user + u.system;
	}
}
us.sort((a, b) => a - b);
console.log(`node_us ${us[Math.floor(rounds / 2)].toFixed(1)}`);
console.log(`node_cpu ${(cpu / (per * rounds)).toFixed(1)}`);
c.close();
