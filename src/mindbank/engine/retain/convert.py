"""Files to retainable text, for the formats a well-kept library reads without a model: plain text, Markdown, HTML
(``beautifulsoup4``: the visible text, one paragraph per block element) and PDF (``pypdf``: the text layer, one
paragraph per page). Anything else — images, audio, office documents, a PDF that is only scanned images — needs a
model (OCR, transcription) and is refused with the type named.

The type comes from the file name's extension, else from the declared content type.
"""

from __future__ import annotations

import io
import re
from pathlib import PurePosixPath

TEXT_TYPES: dict[str, str] = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".log": "text/plain",
    ".csv": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "text/html",
    ".pdf": "application/pdf",
}
SUPPORTED_TYPES = ("text/plain", "text/markdown", "text/html", "application/pdf")
_CONTENT_TYPES = {"text/x-markdown": "text/markdown", "application/xhtml+xml": "text/html"}
_BLOCKS = ("p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "li", "ul", "ol", "dl",
           "dt", "dd", "tr", "table", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "figure",
           "figcaption", "form", "fieldset", "address")  # fmt: skip
_INVISIBLE = ("script", "style", "noscript", "template", "head", "svg", "iframe", "object")


class UnsupportedFileType(ValueError):
    """The file is of a type mindbank cannot read without a model; ``file_type`` names it."""

    def __init__(self, file_type: str) -> None:
        super().__init__(
            f"unsupported file type {file_type!r}: mindbank reads {', '.join(SUPPORTED_TYPES)} "
            "(other formats need OCR or transcription, which needs a model)"
        )
        self.file_type = file_type


class UnreadableFile(ValueError):
    """The file claims a supported type but its content cannot be read as such (a broken or image-only PDF)."""


def file_type(name: str, content_type: str | None) -> str:
    """The supported type of a file, from its extension, else its declared content type. Raises
    :class:`UnsupportedFileType` naming the type it has."""
    suffix = PurePosixPath(name or "").suffix.lower()
    if suffix in TEXT_TYPES:
        return TEXT_TYPES[suffix]
    declared = (content_type or "").split(";")[0].strip().lower()
    declared = _CONTENT_TYPES.get(declared, declared)
    if declared in SUPPORTED_TYPES:
        return declared
    named = declared if declared not in ("", "application/octet-stream") else suffix
    raise UnsupportedFileType(named or declared or "unknown")


def decode_text(data: bytes) -> str:
    """Bytes as text: UTF-8 (with or without BOM), UTF-16 with a BOM, else Latin-1 (never fails)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _tidy(text: str) -> str:
    """Spaces collapsed inside lines, at most one blank line between paragraphs, no blank edges."""
    lines = [re.sub(r"[ \t\f\v\xa0]+", " ", line).strip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def html_text(markup: str) -> str:
    """The visible text of an HTML page, one paragraph per block element.

    One iterative walk over the parsed tree, linear in its size at any nesting (editing the tree instead —
    inserting a break before each block — costs a search of the siblings per insert: quadratic for a flat page)."""
    from bs4 import BeautifulSoup
    from bs4.element import CData, NavigableString, Tag

    soup = BeautifulSoup(markup, "html.parser")
    pieces: list[str] = []
    stack: list[object] = [soup]
    while stack:
        node = stack.pop()
        if isinstance(node, str) and not isinstance(node, NavigableString):
            pieces.append(node)  # a break queued after a block
        elif isinstance(node, NavigableString):
            if type(node) in (NavigableString, CData):  # text, never comments, doctypes or declarations
                pieces.append(str(node))
        elif isinstance(node, Tag):
            if node.name in _INVISIBLE:
                continue
            if node.name == "br":
                pieces.append("\n")
                continue
            block = node.name in _BLOCKS
            if block:
                pieces.append("\n\n")
                stack.append("\n\n")
            stack.extend(reversed(node.contents))
    return _tidy("".join(pieces))


def pdf_text(data: bytes) -> str:
    """The text layer of a PDF, one paragraph per page. Raises :class:`UnreadableFile` for a PDF pypdf cannot
    open or one without any text (scanned pages need OCR)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    depth = pdf_nesting(data)
    if depth > MAX_PDF_DEPTH:
        raise UnreadableFile(f"not a readable PDF: its objects nest {depth} deep (at most {MAX_PDF_DEPTH})")
    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [_tidy(page.extract_text() or "") for page in reader.pages]
    except RecursionError as exc:  # nesting inside a compressed object stream, which the scan cannot see
        raise UnreadableFile("not a readable PDF: its objects nest too deep") from exc
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, AttributeError, IndexError, ZeroDivisionError) as exc:
        # PyPdfError includes LimitReachedError: a stream inflating past pypdf's output limit (a Flate bomb)
        raise UnreadableFile(f"not a readable PDF: {exc}") from exc
    text = "\n\n".join(p for p in pages if p)
    if not text:
        raise UnreadableFile("the PDF has no text layer (scanned pages need OCR, which needs a model)")
    return text


MAX_PDF_DEPTH = 100  # arrays and dictionaries inside each other; pypdf caps its own trees at 100
_PDF_STREAM = re.compile(rb"stream\r?\n.*?endstream", re.DOTALL)
_PDF_BRACKETS = re.compile(rb"<<|>>|\[|\]")


def pdf_nesting(data: bytes) -> int:
    """The deepest nesting of arrays and dictionaries in a PDF's objects (streams' bytes skipped), in one linear
    scan: what pypdf would recurse through (an array 50,000 deep overflows the interpreter's stack, a dictionary
    20,000 deep takes half a minute), measured before pypdf is given the file."""
    deepest = depth = 0
    for match in _PDF_BRACKETS.finditer(_PDF_STREAM.sub(b"", data)):
        depth = depth + 1 if match.group() in (b"<<", b"[") else max(0, depth - 1)
        deepest = max(deepest, depth)
    return deepest


def file_to_text(name: str, content_type: str | None, data: bytes) -> tuple[str, str]:
    """``(type, text)`` of a file. Raises :class:`UnsupportedFileType` and :class:`UnreadableFile`."""
    kind = file_type(name, content_type)
    if kind == "application/pdf":
        return kind, pdf_text(data)
    text = decode_text(data)
    return kind, html_text(text) if kind == "text/html" else text
