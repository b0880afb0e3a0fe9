"""Parsers under budgets, on both stores: a transfer archive's unreadable member is a 422 naming it, a ZIP bomb is
refused while it streams, a hostile PDF (a Flate bomb, objects nested 50,000 deep) is a 415 naming the file, and a
flat HTML page of 20,000 paragraphs is read in linear time. Nothing is written by a refusal."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Callable

import pytest
from conftest import Served
from transfer_testing import REFERENCE_MANIFEST as MANIFEST

from mindbank.engine.retain.convert import html_text, pdf_nesting
from mindbank.testing_files import flate_bomb_pdf, nested_pdf

BASE = "/v1/default/banks/b"
FACTS = "".join(
    json.dumps({"fact_type": "world", "text": f"Fact number {i} about runners.", "created_at": "2026-03-01T10:00:00Z"})
    + "\n"
    for i in range(200)
)


def archive(member_bytes: bytes | None = None, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        zf.writestr("manifest.json", json.dumps(MANIFEST))
        zf.writestr("memories.jsonl", FACTS.encode() if member_bytes is None else member_bytes)
    return buf.getvalue()


def central_entry(data: bytes, name: bytes) -> int:
    """Offset of ``name``'s central directory entry."""
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        length = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46 : at + 46 + length] == name:
            return at
        at = data.find(b"PK\x01\x02", at + 4)
    raise LookupError(name)


def patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def bad_crc() -> bytes:
    data = archive()
    at = central_entry(data, b"memories.jsonl")
    crc = struct.unpack_from("<I", data, at + 16)[0]
    return patched(data, at + 16, "<I", crc ^ 0xFFFF)


def corrupt_deflate() -> bytes:
    data = bytearray(archive())
    local = data.find(b"PK\x03\x04", data.find(b"memories.jsonl") - 40)
    start = local + 30 + len(b"memories.jsonl")
    for i in range(start + 2, start + 40):
        data[i] ^= 0x5A
    return bytes(data)


def encrypted() -> bytes:
    data = archive()
    at = central_entry(data, b"memories.jsonl")
    return patched(data, at + 8, "<H", struct.unpack_from("<H", data, at + 8)[0] | 0x1)


def method_99() -> bytes:
    data = archive()
    return patched(data, central_entry(data, b"memories.jsonl") + 10, "<H", 99)


@pytest.fixture
def s(served: Callable[..., Served]) -> Served:
    served_ = served()
    assert served_.http.post(f"{BASE}/memories", json={"items": [{"content": "Bob bakes bread."}]}).status_code == 200
    return served_


@pytest.mark.parametrize("make", [bad_crc, corrupt_deflate, encrypted, method_99])
def test_an_unreadable_archive_member_is_a_422_naming_it(s: Served, make: Callable[[], bytes]) -> None:
    before = s.dump()
    r = s.http.post(f"{BASE}/transfer/import", params={"target_bank_id": "restored"},
                    files={"file": ("a.zip", make(), "application/zip")})  # fmt: skip
    assert r.status_code == 422, r.text
    detail = r.json()["detail"][0]
    assert detail["loc"] == ["body", "file"] and detail["msg"].startswith("memories.jsonl"), detail["msg"]
    assert s.dump() == before


def test_a_zip_bomb_is_refused_while_it_streams(s: Served) -> None:
    before = s.dump()
    bomb = archive(b"\n" * (64 << 20))  # 64 MB of empty lines in about 64 KB
    assert len(bomb) < 200_000
    r = s.http.post(f"{BASE}/transfer/import", files={"file": ("a.zip", bomb, "application/zip")})
    assert r.status_code == 422 and "memories.jsonl" in r.json()["detail"][0]["msg"], r.text
    assert s.dump() == before
    # a real archive of the same shape, deflated, is no bomb
    r = s.http.post(f"{BASE}/transfer/import", params={"target_bank_id": "ok"},
                    files={"file": ("a.zip", archive(), "application/zip")})  # fmt: skip
    assert r.status_code == 202, r.text


def nested(opening: bytes, closing: bytes, depth: int) -> Callable[[], bytes]:
    return lambda: nested_pdf(opening, closing, depth)


@pytest.mark.parametrize("make", [flate_bomb_pdf, nested(b"[", b"]", 50_000), nested(b"<</A ", b">>", 20_000)])
def test_a_hostile_pdf_is_a_415_naming_the_file(s: Served, make: Callable[[], bytes]) -> None:
    before = s.dump()
    r = s.http.post(f"{BASE}/files/retain", files=[("files", ("evil.pdf", make(), "application/pdf"))])
    assert r.status_code == 415 and "evil.pdf" in r.json()["detail"], r.text
    assert s.dump() == before


def test_pdf_nesting_is_measured_outside_streams() -> None:
    assert pdf_nesting(b"<< /A [1 [2]] >>") == 3
    assert pdf_nesting(b"stream\n[[[[[[[[[[endstream << >>") == 1


def test_html_extraction_keeps_its_text_and_reads_a_flat_page(s: Served) -> None:
    html = (
        "<html><head><title>T</title><style>p{}</style></head><body><h1>Title</h1><p>Hello <b>world</b><br>"
        "line2</p><!-- hidden --><ul><li>a</li><li>b</li></ul><script>x()</script>tail</body></html>"
    )
    assert html_text(html) == "Title\n\nHello world\nline2\n\na\n\nb\n\ntail"
    flat = "<p>paragraph</p>" * 20_000  # quadratic before: 26 s
    r = s.http.post(f"{BASE}/files/retain", files=[("files", ("flat.html", flat.encode(), "text/html"))])
    assert r.status_code == 200, r.text
    assert html_text("<div>" * 5_000 + "deep") == "deep"
