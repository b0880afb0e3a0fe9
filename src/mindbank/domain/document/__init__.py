"""The structured document of a mental model: ordered sections of opaque, verbatim markdown blocks.

A mental model's markdown ``content`` is always ``render_markdown(document)``; the structure is the source of truth
and the markdown is derived from it. Three rooms, re-exported here so ``from mindbank.domain.document import X`` is
the one import the rest of the tree needs:

* :mod:`.model` — ``StructuredDocument``, ``Section``, ``Block``, ids, citations, ``count_tokens``, the JSON form;
* :mod:`.markdown` — the codec: ``render_markdown``, ``parse_markdown``, the block and heading normalisers;
* :mod:`.operations` — the eight delta operations, ``parse_operation`` and ``apply_operations``.

Everything here is pure: no I/O, stdlib only.
"""

from mindbank.domain.document.markdown import (
    normalize_block_text,
    normalize_heading,
    parse_markdown,
    render_markdown,
)
from mindbank.domain.document.model import (
    PREAMBLE_ID,
    SCHEMA_VERSION,
    Block,
    DocumentError,
    Section,
    StructuredDocument,
    block_id_for,
    cited_memory_ids,
    count_tokens,
    format_citation,
    new_block_id,
    new_section_id,
    slugify,
)
from mindbank.domain.document.operations import (
    AddSection,
    AppendBlock,
    ApplyResult,
    InsertBlock,
    Operation,
    RemoveBlock,
    RemoveSection,
    RenameSection,
    ReplaceBlock,
    ReplaceSectionBlocks,
    apply_operations,
    parse_operation,
)

__all__ = [
    "PREAMBLE_ID",
    "SCHEMA_VERSION",
    "AddSection",
    "AppendBlock",
    "ApplyResult",
    "Block",
    "DocumentError",
    "InsertBlock",
    "Operation",
    "RemoveBlock",
    "RemoveSection",
    "RenameSection",
    "ReplaceBlock",
    "ReplaceSectionBlocks",
    "Section",
    "StructuredDocument",
    "apply_operations",
    "block_id_for",
    "cited_memory_ids",
    "count_tokens",
    "format_citation",
    "new_block_id",
    "new_section_id",
    "normalize_block_text",
    "normalize_heading",
    "parse_markdown",
    "parse_operation",
    "render_markdown",
    "slugify",
]
