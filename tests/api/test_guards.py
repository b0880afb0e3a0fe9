"""What every route gets: Host and Origin checks (DNS rebinding), CORS, ``Allow`` on 405 and OPTIONS, MCP URLs
with a trailing slash answered without a redirect, and error responses declared in the OpenAPI document."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from mindbank.api.auth import OPEN_PATHS
from mindbank.api.origin import HostPolicy, is_loopback
from mindbank.config import Settings
from mindbank.server import create_app
from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


def test_loopback_policy() -> None:
    p = HostPolicy.for_bind("127.0.0.1")
    assert p.loopback and not p.open_to_any_host
    for host in ("localhost", "localhost:8888", "127.0.0.1:1", "[::1]:8888", "127.0.0.2"):
        assert p.host_allowed(host), host
    for host in ("evil.example", "evil.example:8888", "127.0.0.1.evil.example", "", None):
        assert not p.host_allowed(host), host
    assert p.origin_allowed(None, "localhost:8888")
    assert p.origin_allowed("http://localhost:3000", "localhost:8888")
    assert p.origin_allowed("http://127.0.0.1:8888", "127.0.0.1:8888")
    assert not p.origin_allowed("http://evil.example", "localhost:8888")
    assert not p.origin_allowed("null", "localhost:8888")
    extra = HostPolicy.for_bind("localhost", "mem.internal", "https://app.example")
    assert extra.host_allowed("mem.internal") and extra.host_allowed("localhost")
    assert extra.origin_allowed("https://app.example", "localhost") and not extra.origin_allowed("https://x.y", "z")
    assert is_loopback("::1") and is_loopback("[::1]") and not is_loopback("0.0.0.0")


def test_public_bind_policy() -> None:
    open_ = HostPolicy.for_bind("0.0.0.0")
    assert open_.open_to_any_host and open_.host_allowed("anything.example")
    # behind a load balancer: the public name, any port, and a wildcard subdomain
    lb = HostPolicy.for_bind("0.0.0.0", "mem.example.com, *.corp.example", "https://ui.example.com")
    assert lb.host_allowed("mem.example.com") and lb.host_allowed("mem.example.com:443")
    assert lb.host_allowed("a.corp.example") and not lb.host_allowed("corp.example.evil")
    assert not lb.host_allowed("localhost")  # a public bind gets no loopback allowance
    assert lb.origin_allowed("https://ui.example.com", "mem.example.com")
    assert lb.origin_allowed("https://mem.example.com", "mem.example.com")  # same origin
    assert not lb.origin_allowed("http://localhost:3000", "mem.example.com")


def test_every_route_checks_host_and_origin(mindbank: MindBank) -> None:
    with TestClient(create_app(mindbank, run_worker=False), base_url="http://evil.example:8888") as evil:
        r = evil.put(f"{BASE}/b", json={"name": "x"}, headers={"origin": "http://evil.example:8888"})
        assert r.status_code == 421 and "evil.example" in r.json()["detail"]
        assert evil.post("/mcp/", json=INIT, headers=MCP_HEADERS).status_code == 421
        assert evil.get("/health").status_code == 200  # load balancers probe by address
    with TestClient(create_app(mindbank, run_worker=False), base_url="http://localhost:8888") as local:
        r = local.put(f"{BASE}/b", json={"name": "x"}, headers={"origin": "http://evil.example"})
        assert r.status_code == 403 and "Origin" in r.json()["detail"]
        ok = local.put(f"{BASE}/b", json={"name": "x"}, headers={"origin": "http://localhost:5173"})
        assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "http://localhost:5173"
        preflight = local.options(
            f"{BASE}/b/memories",
            headers={"origin": "http://localhost:5173", "access-control-request-method": "POST"},
        )
        assert preflight.status_code == 200 and "POST" in preflight.headers["access-control-allow-methods"]
    assert not mindbank.store.list_banks() or mindbank.store.get_bank("b").name == "x"  # type: ignore[union-attr]


def test_configured_hosts_and_origins(mindbank: MindBank, caplog: pytest.LogCaptureFixture) -> None:
    from dataclasses import replace

    mindbank.settings = replace(
        mindbank.settings, host="0.0.0.0", allowed_hosts="mem.example.com", allowed_origins="https://ui.example.com"
    )
    with TestClient(create_app(mindbank, run_worker=False), base_url="https://mem.example.com") as lb:
        assert lb.get(BASE).status_code == 200
        r = lb.get(BASE, headers={"origin": "https://ui.example.com"})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://ui.example.com"
        assert lb.get(BASE, headers={"origin": "https://other.example"}).status_code == 403
    with TestClient(create_app(mindbank, run_worker=False), base_url="http://10.0.0.5") as direct:
        assert direct.get(BASE).status_code == 421
    mindbank.settings = replace(mindbank.settings, allowed_hosts="")
    caplog.clear()
    create_app(mindbank, run_worker=False)
    assert "MINDBANK_ALLOWED_HOSTS" in caplog.text  # any host on a public bind: warned at start-up


def test_405_and_options_list_every_method(client: TestClient) -> None:
    r = client.get(f"{BASE}/b")  # PUT, PATCH and DELETE exist on this path, GET does not
    assert r.status_code == 405
    assert set(re.split(r",\s*", r.headers["allow"])) == {"PUT", "PATCH", "DELETE", "OPTIONS"}
    r = client.options(f"{BASE}/b/mental-models")
    assert r.status_code == 204 and set(re.split(r",\s*", r.headers["allow"])) >= {"GET", "POST", "OPTIONS"}
    assert client.options("/no/such/path").status_code == 404


def test_mcp_urls_answer_without_redirect(client: TestClient) -> None:
    for path in ("/mcp", "/mcp/", "/mcp/b", "/mcp/b/"):
        r = client.post(path, json=INIT, headers=MCP_HEADERS, follow_redirects=False)
        assert r.status_code == 200, (path, r.status_code, r.text)
        assert r.json()["result"]["serverInfo"]["name"] == "mindbank"


def test_openapi_declares_what_routes_answer(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    for path, item in doc["paths"].items():
        for method, op in item.items():
            codes = set(op["responses"])
            if "{bank_id}" in path:
                assert "404" in codes, (method, path)
                bank = next(p for p in op["parameters"] if p["name"] == "bank_id")
                assert bank["schema"]["maxLength"] == 128 and bank["schema"]["pattern"], (method, path)
            if "requestBody" in op:
                assert {"413", "422"} <= codes, (method, path)
            if path in OPEN_PATHS:
                assert "401" not in codes and {"403", "421"} <= codes, (method, path)
            else:
                assert {"401", "403", "421"} <= codes, (method, path)
            for p in op.get("parameters", []):
                schema = p["schema"].get("anyOf", [p["schema"]])[0]
                if schema.get("type") == "integer":
                    assert "maximum" in schema, (method, path, p["name"])  # no unbounded integer reaches a store
    recall = doc["components"]["schemas"]["RecallRequest"]
    assert recall["additionalProperties"] is False and recall["properties"]["query"]["minLength"] == 1
    assert {"min_scores", "temporal_window", "tag_groups", "prefer_observations"} <= set(recall["properties"])
    assert doc["paths"]["/v1/default/banks/{bank_id}/mental-models"]["post"]["responses"]["409"]


def test_settings_limits_fail_fast(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="MINDBANK_MAX_TAG_CHARS"):
        from mindbank.domain.limits import Limits

        Limits.from_settings(Settings(database_url=str(tmp_path / "x.db"), max_tag_chars=0))
    with pytest.raises(ValueError, match="MINDBANK_MAX_BODY_BYTES"):
        Settings.from_env({"MINDBANK_MAX_BODY_BYTES": "lots"})
