"""The per-user local server (docs/decisions.md "Local mode outside tests").

With no API configured, the facade does not embed a backend per process (the
simulated runtime lives in process memory, so two programs would not see the
same sandboxes). It uses one `s0 serve` per user on the default data
directory instead, started in the background on first use.

Contract with `s0 serve` (the same one the `s0` command line follows):

- data directory: ``$S0_DATA_DIR``, else ``$XDG_DATA_HOME/sandbox0``, else
  ``~/.local/share/sandbox0``;
- address file ``<data dir>/server.json``, written atomically by the server
  once it listens: ``{"url": "http://127.0.0.1:PORT", "address": …,
  "pid": N, …}`` (``base_url`` and ``token`` keys are accepted too); a
  plain-text file holding just the URL is accepted as well;
- API key: ``<data dir>/cli-token`` (mode 0600), created by the server on
  first start;
- start command: ``s0 serve --data <dir> --listen 127.0.0.1:0``, run
  detached with its output in ``<data dir>/server.log``; the ``s0`` binary
  is ``$S0_BIN`` or the first ``s0`` on PATH.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional
from urllib.parse import urlsplit

from ._errbase import Sandbox0Error

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client

ADDRESS_FILE = "server.json"
LOG_FILE = "server.log"
TOKEN_FILE = "cli-token"


@dataclass(frozen=True)
class ServerAddress:
    """Where a local server listens."""

    base_url: str
    token: Optional[str] = None
    pid: Optional[int] = None


def default_data_dir() -> Path:
    """``$S0_DATA_DIR``, else ``$XDG_DATA_HOME/sandbox0``, else ``~/.local/share/sandbox0``."""
    env = os.environ.get("S0_DATA_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return base / "sandbox0"


def read_address(data_dir: Optional[Path] = None) -> Optional[ServerAddress]:
    """Parse the address file; None when absent or unreadable."""
    p = (data_dir or default_data_dir()) / ADDRESS_FILE
    try:
        text = p.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text:
        return None
    if text.startswith("{"):
        try:
            d = json.loads(text)
        except ValueError:
            return None
        url = d.get("base_url") or d.get("url")
        if not isinstance(url, str) or not url:
            return None
        pid = d.get("pid")
        tok = d.get("token")
        tok = tok if isinstance(tok, str) and tok else _read_token(p.parent)
        return ServerAddress(url, tok, pid if isinstance(pid, int) else None)
    return ServerAddress(text.splitlines()[0].strip(), _read_token(p.parent))


def _read_token(data_dir: Path) -> Optional[str]:
    """The per-user server's API key from ``<data dir>/cli-token``, if any."""
    try:
        tok = (data_dir / TOKEN_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return tok or None


def is_alive(addr: ServerAddress, timeout_sec: float = 0.5) -> bool:
    """The recorded process exists (when a pid is given) and the address accepts TCP."""
    if addr.pid is not None:
        try:
            os.kill(addr.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
    u = urlsplit(addr.base_url)
    if u.scheme not in ("http", "https") or not u.hostname:
        return False
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        with socket.create_connection((u.hostname, port), timeout=timeout_sec):
            return True
    except OSError:
        return False


def find_s0() -> Optional[str]:
    """The ``s0`` program: ``$S0_BIN`` or the first ``s0`` on PATH."""
    env = os.environ.get("S0_BIN")
    if env:
        return env if os.access(env, os.X_OK) else None
    return shutil.which("s0")


def start_server(data_dir: Optional[Path] = None, *, s0: Optional[str] = None,
                 timeout_sec: float = 15.0) -> ServerAddress:
    """Start ``s0 serve --data <dir>`` detached and wait for its address file.

    :raises Sandbox0Error: (reason ``local_server_unavailable``) no ``s0``
        program, or it did not publish a live address within ``timeout_sec``.
    """
    d = data_dir or default_data_dir()
    prog = s0 or find_s0()
    if not prog:
        raise Sandbox0Error(
            "no Sandbox0 API configured: set SANDBOX0_BASE_URL / SANDBOX0_TOKEN, install the "
            "`s0` program (or set S0_BIN) for the per-user local server, or use "
            "libsandbox0.LocalBackend(path)", reason="local_server_unavailable")
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(d / LOG_FILE, "ab") as log:
        proc = subprocess.Popen([prog, "serve", "--data", str(d), "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, start_new_session=True, close_fds=True)
    deadline = time.monotonic() + timeout_sec
    while time.monotonic() < deadline:
        addr = read_address(d)
        if addr is not None and is_alive(addr):
            return addr
        if proc.poll() is not None and proc.returncode != 0:
            break
        time.sleep(0.05)
    raise Sandbox0Error(f"`{prog} serve` did not publish a live address in {d / ADDRESS_FILE} "
                        f"(see {d / LOG_FILE})", reason="local_server_unavailable")


def ensure_server(data_dir: Optional[Path] = None, *, start: bool = True) -> ServerAddress:
    """The live per-user server's address, starting it when needed."""
    addr = read_address(data_dir)
    if addr is not None and is_alive(addr):
        return addr
    if not start:
        raise Sandbox0Error("the per-user local server is not running",
                            reason="local_server_unavailable")
    return start_server(data_dir)


def connect(data_dir: Optional[Path] = None, *, start: bool = True) -> "Client":
    """A :class:`~libsandbox0.Client` of the per-user local server."""
    from .client import Client

    addr = ensure_server(data_dir, start=start)
    return Client(token=addr.token, base_url=addr.base_url)
