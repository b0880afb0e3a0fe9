"""The control plane's packaging and serving: every static file is package data and served under /ui with a
same-origin Content-Security-Policy; the files reach no other origin and build no HTML from strings; with an API key
the page itself stays open while every API route needs the key."""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from fnmatch import fnmatch
from pathlib import Path

from fastapi.testclient import TestClient

from mindbank import ui
from mindbank.server import create_app
from mindbank.service.facade import MindBank

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p for p in ui.STATIC.rglob("*") if p.is_file())


def test_every_static_file_is_package_data() -> None:
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["mindbank"]
    package = ROOT / "src" / "mindbank"
    for path in FILES:
        relative = path.relative_to(package).as_posix()
        assert any(fnmatch(relative, g) and relative.count("/") == g.count("/") for g in globs), relative
    assert ui.public_paths() == {"/ui", "/ui/", *(f"/ui/{p.relative_to(ui.STATIC).as_posix()}" for p in FILES)}


def test_the_files_reach_no_other_origin_and_never_parse_html() -> None:
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"https?://|//cdn|@import url", text), path.name
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "eval(" not in text, path.name


def test_served_under_ui_with_a_same_origin_policy(mindbank: MindBank) -> None:
    with TestClient(create_app(mindbank, run_worker=False), base_url="http://localhost") as client:
        redirect = client.get("/ui", follow_redirects=False)
        assert redirect.status_code == 307 and redirect.headers["location"] == "/ui/"
        page = client.get("/ui/")
        assert page.status_code == 200 and '<script type="module" src="js/app.js">' in page.text
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "connect-src 'self'" in policy and "script-src 'self'" in policy
        script = client.get("/ui/js/views/model.js")
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
        assert client.get("/ui/missing.js").status_code == 404


def test_with_an_api_key_the_page_is_open_and_the_api_is_not(mindbank: MindBank) -> None:
    mindbank.settings = replace(mindbank.settings, api_key="k")
    with TestClient(create_app(mindbank, run_worker=False), base_url="http://localhost") as client:
        for path in ui.public_paths():
            assert client.get(path, follow_redirects=False).status_code in (200, 307), path
        assert client.get("/v1/default/banks").status_code == 401
        assert client.get("/ui/../v1/default/banks").status_code in (401, 404)
        assert client.get("/v1/default/banks", headers={"authorization": "Bearer k"}).status_code == 200
