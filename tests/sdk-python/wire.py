"""The wire each test made, held to what the installed SDK declares.

The SDK's generated modules (sandbox0/apispec/api/*/*.py) each hold one
route: its method and URL template in `_get_kwargs`, and in
`_parse_response` the statuses it decodes. Any status outside that list
reaches the caller as "Unexpected API response" (sandbox0/response.py), so
every 2xx the server answered must be one the SDK declares for the route
(docs/wire.md "Official SDK generations"), and every error must be the
error envelope of docs/wire.md §2.1.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import sandbox0.apispec.api as api_pkg

_KWARGS = re.compile(r'"method": "(\w+)",\s*"url": "([^"]+)"')
_STATUS = re.compile(r"if response\.status_code == (\d+):")


@lru_cache(maxsize=1)
def declared_routes() -> list[tuple[str, re.Pattern, frozenset[int], str]]:
    """(METHOD, path regexp, declared statuses, module) for every generated route."""
    routes = []
    for module in sorted(Path(api_pkg.__file__).parent.rglob("*.py")):
        if module.name == "__init__.py":
            continue
        text = module.read_text()
        m = _KWARGS.search(text)
        if not m:
            continue
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(m.group(2))) + "$"
        codes = frozenset(int(c) for c in _STATUS.findall(text))
        routes.append((m.group(1).upper(), re.compile(pattern), codes,
                       str(module.relative_to(Path(api_pkg.__file__).parents[1]))))
    assert routes, "no generated routes found in the installed SDK"
    return routes


def route_of(method: str, path: str):
    matches = [r for r in declared_routes() if r[0] == method and r[1].match(path)]
    # the most specific template (fewest parameters) wins: /files/stat over /files/{x}
    matches.sort(key=lambda r: r[1].pattern.count("[^/]+"))
    return matches[0] if matches else None


def declared(method: str, path: str) -> frozenset[int]:
    r = route_of(method, path)
    assert r, f"the SDK has no route {method} {path}"
    return r[2]


def audit(seen) -> None:
    for x in seen:
        what = f"{x.method} {x.path}?{x.query} -> {x.status}"
        if x.path in ("/healthz", "/metadata"):
            continue
        r = route_of(x.method, x.path)
        assert r, f"unexpected route {what}"
        if 200 <= x.status < 300:
            assert x.status in r[2], f"{what}: the SDK ({r[3]}) decodes only {sorted(r[2])}"
            if x.body is not None:
                assert x.body.get("success") is True and "data" in x.body, what
        else:
            assert 400 <= x.status < 600, what
            assert x.content_type.startswith("application/json"), f"{what}: {x.content_type}"
            assert x.body["success"] is False, what
            assert isinstance(x.body["error"]["code"], str), what
            assert isinstance(x.body["error"]["message"], str), what
            assert "data" not in x.body, what
