"""A scoped key reaches only its banks on every path that names or creates one (restore, clone, MCP URLs, archive
downloads), on both stores: outside its scopes the same 404 whether the bank exists or not, an invalid bank id a
422 naming it, and nothing written."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Served

ADMIN = "admin-secret-for-tests"
BASE = "/v1/default/banks"
MANIFEST = {"format": "bank-transfer", "format_version": 1, "exported_at": "2026-03-01T10:00:00Z"}
RPC = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def archive(source: str, **members: Any) -> bytes:
    """A reference-shaped archive whose manifest names ``source``; ``members``: name (dots as underscores) →
    records."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("manifest.json", json.dumps({**MANIFEST, "source_bank_id": source}))
        for name, records in members.items():
            zf.writestr(name.replace("_jsonl", ".jsonl"), "".join(json.dumps(r) + "\n" for r in records))
    return buf.getvalue()


WEBHOOK = {"url": "http://93.184.215.14/hook", "event_types": ["retain.completed"]}


def setup(s: Served) -> tuple[dict[str, str], dict[str, str]]:
    admin = bearer(ADMIN)
    for bank in ("team-a", "other"):
        r = s.http.post(f"{BASE}/{bank}/memories", json={"items": [{"content": f"{bank} likes tea."}]}, headers=admin)
        assert r.status_code == 200
    r = s.http.post("/v1/default/api-keys", json={"banks": ["team-*"]}, headers=admin)
    return admin, bearer(r.json()["key"])


def upload(s: Served, bank: str, data: bytes, headers: dict[str, str], **params: Any) -> Any:
    return s.http.post(f"{BASE}/{bank}/transfer/import", params=params, headers=headers,
                       files={"file": ("a.zip", data, "application/zip")})  # fmt: skip


def test_a_scoped_key_restores_and_clones_only_inside_its_scopes(served: Callable[..., Served]) -> None:
    s = served(api_key=ADMIN)
    _, key = setup(s)
    before = s.dump()
    squat = archive("tenant-42", webhooks_jsonl=[WEBHOOK])
    # restore naming a bank outside the scope (by the manifest or by target_bank_id): 404, as a missing bank
    assert upload(s, "team-a", squat, key).status_code == 404
    assert upload(s, "team-a", archive("team-x"), key, target_bank_id="victim-clone").status_code == 404
    # an existing bank outside the scope answers the same 404 (no existence oracle), never 409
    assert upload(s, "team-a", archive("other"), key).status_code == 404
    for target in ("victim-clone", "other"):
        r = s.http.post(f"{BASE}/team-a/clone", params={"target_bank_id": target}, headers=key)
        assert r.status_code == 404, r.text
    assert s.dump() == before
    # inside the scope it works (and an existing bank inside the scope is the usual 409)
    assert upload(s, "team-a", archive("team-restored"), key).status_code == 202
    assert upload(s, "team-a", archive("team-a"), key).status_code == 409
    assert s.http.post(f"{BASE}/team-a/clone", params={"target_bank_id": "team-copy"}, headers=key).status_code == 202


@pytest.mark.parametrize("bad", ["a/b", "bad*bank", "sp ace", "tab\tbank"])
def test_restore_and_clone_create_only_valid_bank_ids(served: Callable[..., Served], bad: str) -> None:
    s = served()
    assert s.http.post(f"{BASE}/src/memories", json={"items": [{"content": "x y z."}]}).status_code == 200
    before = s.dump()
    r = s.http.post(f"{BASE}/src/clone", params={"target_bank_id": bad})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "target_bank_id"], r.text
    r = upload(s, "src", archive("fine"), {}, target_bank_id=bad)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "target_bank_id"], r.text
    r = upload(s, "src", archive(bad), {})  # the manifest's source bank is the default target
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "file"], r.text
    assert s.dump() == before


def test_mcp_urls_follow_the_same_rule(served: Callable[..., Served]) -> None:
    s = served(api_key=ADMIN)
    admin, key = setup(s)
    before = s.dump()
    for bad in ("team-*", "team-a%20b", "team-a%09b"):
        r = s.http.post(f"/mcp/{bad}/", json=RPC, headers=admin)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["path", "bank_id"], (bad, r.text)
    for outside in ("other", "nobody"):
        assert s.http.post(f"/mcp/{outside}/", json=RPC, headers=key).status_code == 404
    assert s.dump() == before


def test_a_scoped_key_downloads_the_archives_of_its_banks_only(served: Callable[..., Served]) -> None:
    s = served(api_key=ADMIN)
    admin, key = setup(s)
    urls = {}
    for bank, headers in (("team-a", key), ("other", admin)):
        r = s.http.post(f"{BASE}/{bank}/transfer/export", headers=headers)
        assert r.status_code == 202, r.text
        s.mb.run_pending()
        op = s.http.get(f"{BASE}/{bank}/operations/{r.json()['operation_id']}", headers=admin).json()
        urls[bank] = op["result_metadata"]["download_url"]
    own = s.http.get(urls["team-a"], headers=key)
    assert own.status_code == 200 and own.headers["content-type"] == "application/zip"
    assert s.http.get(urls["other"], headers=key).status_code == 404  # as a missing file
    assert s.http.get(urls["other"], headers=admin).status_code == 200
