"""Several `s0 serve` nodes on one PostgreSQL database and one S3 prefix, driven
over the official HTTP API (docs/wire.md) with the standard library only.

Used by tests/nodes/test_nodes.py and bench/nodes/bench_nodes.py. The
environment gives the servers (scripts/test.d/49-nodes.sh starts them):
S0_CLI (the s0 binary), S0_TEST_PG_ADMIN (a libpq URL of a database where
new databases may be created), S0_TEST_S3_URL and the AWS_* credentials.
"""
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

TOKEN = "s0_nodes_" + secrets.token_hex(12)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_until(what, fn, deadline_s=30.0, step_s=0.05):
    """Poll fn() until it returns a truthy value; fail with `what` after the deadline."""
    end = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < end:
        try:
            last = fn()
        except (OSError, urllib.error.URLError) as e:  # a node that is not up yet
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(step_s)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


class PgProxy:
    """A TCP path to the PostgreSQL server's unix socket for one node: cut()
    refuses new connections and drops the open ones (the server unreachable
    from that node only); restore() opens the path again on the same port."""

    def __init__(self, admin_url):
        q = dict(kv.split("=", 1) for kv in admin_url.partition("?")[2].split("&") if kv)
        self.sock_path = os.path.join(q["host"], f".s.PGSQL.{q['port']}")
        self.port = free_port()
        self.lock = threading.Lock()
        self.conns, self.listener = [], None
        self.restore()

    def restore(self):
        l = socket.socket()
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind(("127.0.0.1", self.port))
        l.listen(64)
        self.listener = l
        threading.Thread(target=self._accept, args=(l,), daemon=True).start()

    def _accept(self, l):
        while True:
            try:
                c, _ = l.accept()
            except OSError:
                return
            u = socket.socket(socket.AF_UNIX)
            try:
                u.connect(self.sock_path)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns += [c, u]
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


class Answer:
    def __init__(self, status, body, headers):
        self.status, self.body, self.headers = status, body, headers

    def json(self):
        return json.loads(self.body or b"null")

    def data(self):
        return (self.json() or {}).get("data")

    def __repr__(self):
        return f"Answer({self.status}, {self.body[:300]!r})"


class Node:
    """One `s0 serve` process with its own data directory."""

    def __init__(self, cluster, name):
        self.cluster, self.name = cluster, name
        self.data = os.path.join(cluster.dir, name)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None
        self.log_path = os.path.join(cluster.dir, name + ".log")
        self.pg_proxy = None  # set by Cluster(proxied=...): its own path to PostgreSQL

    def start(self):
        cmd = [os.environ["S0_CLI"], "serve", "--data", self.data, "--listen",
               f"127.0.0.1:{self.port}", "--token", TOKEN, "--meta", self.meta(),
               "--objects", self.cluster.objects, "--key-file", self.cluster.key_file,
               "--node-lease-ms", str(self.cluster.lease_ms), "--enable-admin", "--quiet",
               "--runtime", self.cluster.runtime]  # sim unless the test asks for gvisor
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(f"{self.name} to answer /healthz",
                   lambda: self.proc.poll() is None and self.get("/healthz").status == 200
                   or self.proc.poll() is not None and self._died(), 60)
        return self

    def meta(self):
        if not self.pg_proxy:
            return self.cluster.meta
        return f"postgresql://s0@127.0.0.1:{self.pg_proxy.port}/{self.cluster.db}"

    def _died(self):
        raise AssertionError(f"{self.name} exited {self.proc.returncode}: {self.tail()}")

    def tail(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-3000:].decode(errors="replace")
        except OSError:
            return ""

    def kill9(self):
        self.proc.kill()  # SIGKILL: no cleanup, the lease just stops being renewed
        self.proc.wait()
        self.proc = None

    def stop(self):
        if self.proc:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if getattr(self, "log", None):
            self.log.close()
            self.log = None

    def node_id(self):
        return self.get("/healthz").data()["node"]["id"]

    def call(self, method, path, body=None, raw=None, headers=None, token=TOKEN, timeout=60):
        h = {"Authorization": f"Bearer {token}"} if token else {}
        h.update(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return Answer(r.status, r.read(), dict(r.headers))
        except urllib.error.HTTPError as e:
            return Answer(e.code, e.read(), dict(e.headers))

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.call("POST", path, body=body if body is not None else {}, **kw)

    # the API, as the SDKs call it
    def claim(self):
        a = self.post("/api/v1/sandboxes", {"template": "default"})
        assert a.status in (200, 201), a
        d = a.data()
        return d.get("sandbox_id") or d["id"]

    def sandbox(self, sid):
        a = self.get(f"/api/v1/sandboxes/{sid}")
        return a.data() if a.status == 200 else a

    def pause(self, sid):
        return self.post(f"/api/v1/sandboxes/{sid}/pause")

    def resume(self, sid):
        return self.post(f"/api/v1/sandboxes/{sid}/resume")

    def write(self, sid, path, content: bytes):
        a = self.call("POST", f"/api/v1/sandboxes/{sid}/files?path={path}", raw=content,
                      headers={"Content-Type": "application/octet-stream"})
        assert a.status in (200, 201), a
        return a

    def read(self, sid, path):
        return self.get(f"/api/v1/sandboxes/{sid}/files?path={path}")

    def fault(self, name, mode="hold", arm=True, **kw):
        """Arm (count=, delay_ms= as the admin API takes them) or release a fault point."""
        a = self.call("POST" if arm else "DELETE", "/admin/v1/faults",
                      body=dict({"name": name, "mode": mode}, **kw) if arm else {"name": name},
                      )
        assert a.status == 200, a
        return a

    def inspect(self):
        a = self.get("/admin/v1/inspect")
        assert a.status == 200, a
        return a.data()


def wait_state(node, sid, status, paused, deadline_s=60):
    def ok():
        s = node.sandbox(sid)
        return isinstance(s, dict) and s["status"] == status and s["paused"] == paused and s
    return wait_until(f"{sid} {status} paused={paused} via {node.name}", ok, deadline_s)


class Cluster:
    """N nodes sharing a new database and a new S3 prefix (and one key file)."""

    def __init__(self, n, lease_ms=1500, name=None, proxied=(), runtime="sim"):
        self.dir = tempfile.mkdtemp(prefix="s0-nodes.")
        self.lease_ms = lease_ms
        self.runtime = runtime  # "sim": the simulated runtime (faults, no root needed)
        db = name or "nodes_" + secrets.token_hex(4)
        self.db = db
        admin = os.environ["S0_TEST_PG_ADMIN"]
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", admin, "-c",
                        f"CREATE DATABASE {db}"], check=True, capture_output=True)
        base, _, query = admin.partition("?")
        self.meta = base.rsplit("/", 1)[0] + "/" + db + ("?" + query if query else "")
        s3 = os.environ["S0_TEST_S3_URL"]
        bucket, query = s3.split("?", 1)
        self.objects = f"{bucket}/{db}?{query}"
        self.key_file = os.path.join(self.dir, "installation.key")
        with open(os.open(self.key_file, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
            f.write(secrets.token_bytes(32))
        self.nodes = [Node(self, f"n{i}") for i in range(n)]
        for i in proxied:  # these nodes reach PostgreSQL through a path the test can cut
            self.nodes[i].pg_proxy = PgProxy(admin)

    def sql(self, query):
        """One query's first column of the first row, on this cluster's database."""
        r = subprocess.run(["psql", "-qtA", "-v", "ON_ERROR_STOP=1", self.meta, "-c", query],
                           check=True, capture_output=True, text=True)
        return r.stdout.strip()

    def start(self):
        for n in self.nodes:
            n.start()
        return self

    def close(self):
        for n in self.nodes:
            n.stop()
            if n.pg_proxy:
                n.pg_proxy.cut()
        subprocess.run(["psql", "-q", os.environ["S0_TEST_PG_ADMIN"], "-c",
                        f"DROP DATABASE IF EXISTS {self.db} WITH (FORCE)"], capture_output=True)
        subprocess.run(["rm", "-rf", self.dir])

    def __enter__(self):
        try:
            return self.start()
        except BaseException:  # a node that did not start: stop the others, remove all
            self.__exit__(*sys.exc_info())
            raise

    def __exit__(self, *exc):
        if exc[0]:
            for n in self.nodes:
                print(f"--- {n.name} log tail ---\n{n.tail()}")
        self.close()
