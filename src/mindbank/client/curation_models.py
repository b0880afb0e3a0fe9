"""Pydantic models of the server's answers about curation (docs/curation.md): a mental model's document by block,
with each block's curation marks, and a draft waiting for review. Like :mod:`mindbank.client.models`, every model
allows extra fields."""

from __future__ import annotations

from pydantic import Field

from mindbank.client.models import _Response


class Block(_Response):
    """One block: its id, verbatim markdown, the memories it cites, and who wrote it (``origin`` "person" with
    ``author`` and ``edited_at`` for a hand edit; None: a refresh) and whether it is ``pinned``."""

    id: str
    text: str
    memory_ids: list[str] = Field(default_factory=list)
    origin: str | None = None
    author: str | None = None
    edited_at: str | None = None
    pinned: bool = False


class Section(_Response):
    """One section: ``heading`` ("" for the preamble), ATX ``level``, its blocks, and whether it is ``pinned``."""

    id: str
    heading: str
    level: int
    blocks: list[Block] = Field(default_factory=list)
    pinned: bool = False


class MentalModelBlocks(_Response):
    """``GET …/mental-models/{id}/blocks`` (and every curation write): the document by block. ``fixed_block_ids``:
    the blocks refreshes keep as they are; ``block_id``: the block an add created."""

    mental_model_id: str
    version: int = 1
    sections: list[Section] = Field(default_factory=list)
    fixed_block_ids: list[str] = Field(default_factory=list)
    max_tokens: int | None = None
    document_tokens: int | None = None
    block_id: str | None = None


class MentalModelDraft(_Response):
    """``GET …/mental-models/{id}/draft``: the refresh waiting for review, with its unified ``diff`` against the
    published content."""

    mental_model_id: str
    draft_id: str
    created_at: str | None = None
    content: str = ""
    published_content: str = ""
    diff: str = ""
    watermark: str | None = None
    effective_mode: str | None = None
    outcome: str | None = None
    replaced_draft_id: str | None = None
