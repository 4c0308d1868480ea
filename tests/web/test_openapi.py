"""``/api/v1/openapi.json`` matches the routes: every route is documented, every
documented operation is a route, and every reference resolves."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.routing import Route

from indexer.core import Core
from indexer.settings import Settings
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web import openapi
from indexer.web.api import api_routes
from indexer.web.auth import Logins, login_endpoints
from shared.workspace import Workspace


def route_operations(tmp_path: Path) -> set[tuple[str, str]]:
    workspace = Workspace(tmp_path)
    core = Core(Settings(workspace=workspace), Vault(Sandbox(workspace), max_file_bytes=1024), None)
    routes = api_routes(core, login_endpoints(Logins(None))[1])
    operations = set()
    for route in routes:
        assert isinstance(route, Route)
        path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
        for method in route.methods or ():
            if method != "HEAD":
                operations.add((method.lower(), path))
    return operations


def test_every_route_is_documented_and_every_operation_is_a_route(tmp_path: Path) -> None:
    documented = {
        (method, path) for path, item in openapi.document()["paths"].items() for method in item
    }
    assert route_operations(tmp_path) == documented


def test_path_parameters_are_declared_and_refs_resolve() -> None:
    doc = openapi.document()
    schemas = doc["components"]["schemas"]
    for path, item in doc["paths"].items():
        wanted = set(re.findall(r"\{(\w+)\}", path))
        for method, operation in item.items():
            declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert declared == wanted, (method, path)
            assert operation["responses"], (method, path)
    refs = re.findall(r"#/components/schemas/(\w+)", str(doc))
    assert refs and all(ref in schemas for ref in refs)


def test_every_spec_route_is_there() -> None:
    paths = openapi.document()["paths"]
    spec = {
        ("get", "/status"), ("get", "/{lang}/notes"), ("get", "/{lang}/notes/{path}"),
        ("put", "/{lang}/notes/{path}"), ("delete", "/{lang}/notes/{path}"),
        ("post", "/{lang}/append"), ("post", "/{lang}/move"), ("post", "/{lang}/restore"),
        ("post", "/{lang}/recall"), ("get", "/{lang}/search"), ("get", "/{lang}/grep"),
        ("get", "/{lang}/history/{path}"), ("get", "/{lang}/diff/{path}"),
        ("get", "/{lang}/summary"), ("get", "/openapi.json"),
    }  # fmt: skip
    assert all(method in paths.get(path, {}) for method, path in spec)
