"""Lifecycle operations per second with C concurrent clients on 1, 2 and 3
`s0 serve` nodes sharing one PostgreSQL database and one S3 prefix
(docs/scaling.md "Several nodes: measured").

    bench/nodes/run.sh [--clients 8] [--seconds 20] [--nodes 1,2,3]

Each client owns one sandbox claimed through "its" node (client i uses node
i mod N for every call) and repeats: pause, wait until paused, resume (the
resume answers once running). One operation = one pause or one resume. Each
configuration runs on a new database and prefix; the same run also reports
what PostgreSQL did (transactions and rows written per second, from
pg_stat_database) so the limit can be named.
"""
import argparse
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "nodes"))
from nodes import Cluster  # noqa: E402


def pg_stats(db):
    out = subprocess.run(["psql", "-Atq", os.environ["S0_TEST_PG_ADMIN"], "-c",
                          "SELECT xact_commit + xact_rollback, tup_inserted + tup_updated"
                          f" + tup_deleted FROM pg_stat_database WHERE datname = '{db}'"],
                         capture_output=True, text=True, check=True).stdout.strip()
    x, t = out.split("|")
    return int(x), int(t)


def cpu_s(pids):
    total = 0.0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        total += (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    return total


def run(n_nodes, clients, seconds):
    with Cluster(n_nodes, lease_ms=30000) as c:
        sids = [c.nodes[i % n_nodes].claim() for i in range(clients)]
        stop = threading.Event()
        counts = [0] * clients
        errors = []

        retries = [0]

        def call(fn, ok):
            """fn() until its status is in ok; a 503 is retried as clients do."""
            while True:
                a = fn()
                if a.status in ok or a.status != 503 or stop.is_set():
                    return a
                retries[0] += 1
                time.sleep(0.01)

        def client(i):
            node, sid = c.nodes[i % n_nodes], sids[i]
            while not stop.is_set():
                p = call(lambda: node.pause(sid), (200, 202))
                if p.status not in (200, 202):
                    errors.append(p)
                    return
                etag = None
                while True:  # a long-poll (docs/wire.md "Long-poll"), as the SDKs wait
                    h = {"If-None-Match": etag, "Prefer": "wait=5"} if etag else {}
                    g = node.get(f"/api/v1/sandboxes/{sid}", headers=h)
                    if g.status == 304:
                        continue
                    etag = g.headers.get("ETag")
                    s = g.data() if g.status == 200 else None
                    if s and s["paused"] and s["status"] == "paused":
                        break
                    if not etag:
                        time.sleep(0.002)
                counts[i] += 1
                r = call(lambda: node.resume(sid), (200,))
                if r.status != 200 and not stop.is_set():
                    errors.append(r)
                    return
                if r.status == 200:
                    counts[i] += 1

        pids = [n.proc.pid for n in c.nodes]
        x0, t0 = pg_stats(c.db)
        cpu0 = cpu_s(pids)
        w0 = time.monotonic()
        ts = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        [t.start() for t in ts]
        time.sleep(seconds)
        stop.set()
        [t.join() for t in ts]
        wall = time.monotonic() - w0
        x1, t1 = pg_stats(c.db)
        cpu1 = cpu_s(pids)
        if errors:
            raise SystemExit(f"{n_nodes} nodes: {errors[0]!r}")
        ops = sum(counts)
        return {"nodes": n_nodes, "ops": ops, "ops_s": ops / wall,
                "pg_xact_s": (x1 - x0) / wall, "pg_rows_s": (t1 - t0) / wall,
                "pg_xact_op": (x1 - x0) / max(ops, 1), "node_cpu": (cpu1 - cpu0) / wall,
                "retries": retries[0]}


def forward_cost(n=300):
    """Median ms of a GET of a running sandbox through the node running it and
    through another node (forwarded over the node channel), and of a file read."""
    with Cluster(2, lease_ms=30000) as c:
        a, b = c.nodes
        sid = a.claim()
        a.write(sid, "/home/user/f", b"x" * 4096)
        out = {}
        for name, node in (("owner", a), ("forwarded", b)):
            for what, fn in (("get", lambda: node.get(f"/api/v1/sandboxes/{sid}")),
                             ("read", lambda: node.read(sid, "/home/user/f"))):
                ts = []
                for _ in range(n):
                    t = time.perf_counter()
                    assert fn().status == 200
                    ts.append((time.perf_counter() - t) * 1000)
                ts.sort()
                out[(name, what)] = ts[len(ts) // 2]
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--nodes", default="1,2,3")
    a = ap.parse_args()
    fc = forward_cost()
    rows = [run(int(n), a.clients, a.seconds) for n in a.nodes.split(",")]
    base = rows[0]["ops_s"]
    print(f"lifecycle ops/s, {a.clients} clients, {a.seconds:.0f} s each, PostgreSQL + S3"
          f" (loadavg {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)")
    print("| nodes | ops/s | vs 1 node | PG xact/s | PG xact/op | PG rows/s |"
          " node CPU (cores) | 503s retried |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['nodes']} | {r['ops_s']:.1f} | {r['ops_s'] / base:.2f} | "
              f"{r['pg_xact_s']:.0f} | {r['pg_xact_op']:.1f} | {r['pg_rows_s']:.0f} | "
              f"{r['node_cpu']:.2f} | {r['retries']} |")
    print("median ms per call (300 each): GET sandbox through its node "
          f"{fc[('owner', 'get')]:.2f}, forwarded {fc[('forwarded', 'get')]:.2f}; "
          f"file read through its node {fc[('owner', 'read')]:.2f}, "
          f"forwarded {fc[('forwarded', 'read')]:.2f}")


if __name__ == "__main__":
    main()
