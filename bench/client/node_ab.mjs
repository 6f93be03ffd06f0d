// Compare builds of the Node addon in one process (bench/client/README.md,
// third pass): rounds of 100 calls alternate between the addons so load hits
// them alike.
//   node node_ab.mjs PACKAGE_DIR URL TOKEN SANDBOX_ID ADDON.node...
// Per addon it prints the min, p25 and median round of `native.get` +
// `toSandbox` (as client.sandboxes.get) and of `native.get(h, "")`, which
// fails in C at once: the hand-off to the addon thread and back alone.
// run.sh does not run it; LD_LIBRARY_PATH must name the build's library.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const [pkg, url, token, id, ...addons] = process.argv.slice(2);
const models = require(path.resolve(pkg, "dist/src/models.js"));
const { call } = require(path.resolve(pkg, "dist/src/errors.js"));
const vs = addons.map((a) => {
	const n = require(path.resolve(a));
	return { name: path.basename(a), n, h: n.clientNew({ baseUrl: url, token }), get: [], rt: [] };
});
const per = 100;
const us = (t0) => Number(process.hrtime.bigint() - t0) / 1e3 / per;
for (let r = -1; r < 40; r++) {
	for (const v of vs) {
		let t0 = process.hrtime.bigint();
		for (let i = 0; i < per; i++)
			models.toSandbox(await call(v.n.get(v.h, id)));
		if (r >= 0)
			v.get.push(us(t0));
		t0 = process.hrtime.bigint();
		for (let i = 0; i < per; i++)
			await v.n.get(v.h, "").catch(() => {});
		if (r >= 0)
			v.rt.push(us(t0));
	}
}
const q = (x, p) => [...x].sort((a, b) => a - b)[Math.floor(p * (x.length - 1))].toFixed(1);
for (const v of vs) {
	console.log(`${v.name} get min/p25/median ${q(v.get, 0)} ${q(v.get, 0.25)} ${q(v.get, 0.5)}` +
		` round-trip ${q(v.rt, 0)} ${q(v.rt, 0.25)} ${q(v.rt, 0.5)}`);
	v.n.clientClose(v.h);
}
