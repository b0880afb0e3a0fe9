"""Files for tests and benchmarks of the upload paths, shipped with mindbank beside :mod:`mindbank.testing`: a PDF
written out from its objects (cross-reference table and trailer included), so a test can make a readable one-page
PDF or a hostile one (objects nested deep, a Flate bomb) without a PDF library."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

FONT = b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"


def pdf_of(objects: Sequence[bytes]) -> bytes:
    """A PDF whose objects are ``objects`` (numbered from 1; object 1 is the catalog) with its cross-reference
    table and trailer."""
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj" % number + body + b"endobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def one_page_pdf(contents: bytes, page_extra: bytes = b"") -> bytes:
    """A one-page PDF: ``contents`` is its content stream object (``<</Length n>>stream ... endstream``),
    ``page_extra`` more entries of the page dictionary; the font is Helvetica as ``/F1``."""
    return pdf_of([
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 400 144]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>"
        + page_extra + b">>",
        contents,
        FONT,
    ])  # fmt: skip


def stream(data: bytes, *, deflate: bool = False) -> bytes:
    """A stream object of ``data`` (Flate-compressed with ``deflate``)."""
    if deflate:
        data = zlib.compress(data, 9)
        return b"<</Length %d/Filter/FlateDecode>>stream\n" % len(data) + data + b"\nendstream"
    return b"<</Length %d>>stream\n" % len(data) + data + b"\nendstream"


def text_pdf(text: str) -> bytes:
    """A one-page PDF whose text layer is ``text``."""
    return one_page_pdf(stream(f"BT /F1 12 Tf 20 100 Td ({text}) Tj ET".encode()))


def nested_pdf(opening: bytes, closing: bytes, depth: int) -> bytes:
    """A readable one-page PDF whose page holds an entry nested ``depth`` deep (``[``/``]`` or ``<</A ``/``>>``)."""
    return one_page_pdf(stream(b"BT /F1 12 Tf 20 100 Td (Hello) Tj ET"), b"/Deep " + opening * depth + closing * depth)


def flate_bomb_pdf(megabytes: int = 110) -> bytes:
    """A one-page PDF whose content stream inflates to about ``megabytes`` MB from a few hundred KB."""
    packer = zlib.compressobj(9)
    chunk = b"0 0 Td " * (1 << 17)  # 0.9 MB
    body = b"".join(packer.compress(chunk) for _ in range(megabytes * 8 // 7)) + packer.flush()
    return one_page_pdf(b"<</Length %d/Filter/FlateDecode>>stream\n" % len(body) + body + b"\nendstream")
