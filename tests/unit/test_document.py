"""Tests for mindbank.domain.document: parsing, rendering, ids, provenance, serialisation, operations."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindbank.domain.document import (
    AddSection,
    AppendBlock,
    Block,
    DocumentError,
    InsertBlock,
    RemoveBlock,
    RemoveSection,
    RenameSection,
    ReplaceBlock,
    ReplaceSectionBlocks,
    Section,
    StructuredDocument,
    apply_operations,
    block_id_for,
    cited_memory_ids,
    count_tokens,
    format_citation,
    new_block_id,
    new_section_id,
    normalize_block_text,
    normalize_heading,
    parse_markdown,
    parse_operation,
    render_markdown,
    slugify,
)

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def bid(text: str) -> str:
    return "b" + hashlib.sha1(text.encode()).hexdigest()[:8]


def structure(doc: StructuredDocument) -> list[tuple[str, int, list[str]]]:
    """Headings, levels and block texts, ignoring ids and sections that render to nothing."""
    return [(s.heading, s.level, [b.text for b in s.blocks]) for s in doc.sections if s.heading or s.blocks]


# --------------------------------------------------------------------------------------------------------
# Hypothesis strategies

WORDS = [
    "alpha",
    "Beta",
    "gamma",
    "C#",
    "#tag",
    "x#y",
    "*em*",
    "`code`",
    "ünï",
    "42",
    "a-b",
    "[mem:m1]",
    "[mem:m_2]",
]
word = st.sampled_from(WORDS)
heading_st = st.lists(word, min_size=1, max_size=4).map(" ".join)
line_st = st.lists(word, min_size=1, max_size=6).map(" ".join)

paragraph_st = st.lists(line_st, min_size=1, max_size=3).map("\n".join)
bullets_st = st.lists(
    st.tuples(st.sampled_from(["- ", "  - ", "* ", "1. "]), line_st).map("".join), min_size=1, max_size=4
).map("\n".join)


@st.composite
def table_st(draw: st.DrawFn) -> str:
    cols = draw(st.integers(1, 3))
    rows = draw(st.lists(st.lists(word, min_size=cols, max_size=cols), min_size=1, max_size=3))
    header = draw(st.lists(word, min_size=cols, max_size=cols))
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * cols]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


@st.composite
def fence_st(draw: st.DrawFn) -> str:
    char = draw(st.sampled_from(["`", "~"]))
    marker = char * draw(st.integers(3, 4))
    info = draw(st.sampled_from(["", "python", "md"]))
    other = "~~~" if char == "`" else "```"
    body = draw(
        st.lists(
            st.one_of(
                line_st,
                st.sampled_from(["", "   ", "# not a heading", "## nor this ##", "    indented", other]),
            ),
            max_size=6,
        )
    )
    block = "\n".join([marker + info, *body, marker])
    before = draw(st.one_of(st.none(), line_st))
    after = draw(st.one_of(st.none(), line_st))
    return "\n".join(x for x in (before, block, after) if x is not None)


block_text_st = st.one_of(paragraph_st, bullets_st, table_st(), fence_st())


@st.composite
def document_st(draw: st.DrawFn) -> StructuredDocument:
    """A valid document whose ids are exactly those a parse of its rendering would assign."""
    sections: list[Section] = []

    def blocks_for(section_id: str, heading: str, level: int, texts: list[str]) -> Section:
        blocks: list[Block] = []
        for text in texts:
            partial = StructuredDocument([*sections, Section(section_id, heading, level, blocks)])
            blocks.append(Block(new_block_id(partial, text), text))
        return Section(section_id, heading, level, blocks)

    preamble = draw(st.lists(block_text_st, max_size=2))
    if preamble:
        sections.append(blocks_for("preamble", "", 1, preamble))
    for _ in range(draw(st.integers(0, 4))):
        heading = draw(heading_st)
        level = draw(st.integers(1, 6))
        sid = new_section_id(StructuredDocument(sections), heading)
        sections.append(blocks_for(sid, heading, level, draw(st.lists(block_text_st, max_size=3))))
    return StructuredDocument(sections)


TRICKY_LINES = [
    "",
    "   ",
    "\t",
    "# H",
    "## H ##",
    "#",
    "# #",
    "####### seven",
    "#nospace",
    "```",
    "```py",
    "~~~",
    "````",
    "``` `x`",
    "~~~ ~",
    "  ```",
    "    ```",
    "- item",
    "| a | b |",
    "text [mem:x1]",
    "para",
    "C# ##",
    "\x85",
    "a\r",
    "\r",
    "x  ",
    "### C# #",
]
markdown_st = st.lists(
    st.one_of(st.sampled_from(TRICKY_LINES), st.text(alphabet="#`~ -a\t\r|[]:m", max_size=8)), max_size=25
).map("\n".join)


# --------------------------------------------------------------------------------------------------------
# Round-trip properties


@FAST
@given(document_st())
def test_render_parse_render_is_identity(doc: StructuredDocument) -> None:
    markdown = render_markdown(doc)
    assert render_markdown(parse_markdown(markdown)) == markdown


@FAST
@given(document_st())
def test_parse_restores_generated_document_verbatim(doc: StructuredDocument) -> None:
    # Same ids, headings, levels and byte-identical block texts (tables, lists, fences with "#" lines).
    assert parse_markdown(render_markdown(doc)) == doc


@FAST
@given(markdown_st)
def test_parse_then_render_is_a_fixed_point(markdown: str) -> None:
    first = parse_markdown(markdown)
    rendered = render_markdown(first)
    second = parse_markdown(rendered)
    assert second == first
    assert render_markdown(second) == rendered


@FAST
@given(markdown_st)
def test_canonical_markdown_is_byte_identical(markdown: str) -> None:
    canonical = render_markdown(parse_markdown(markdown))
    assert render_markdown(parse_markdown(canonical)) == canonical
    assert canonical == "" or (canonical.endswith("\n") and not canonical.endswith("\n\n"))


@FAST
@given(block_text_st)
def test_generated_blocks_are_single_blocks(text: str) -> None:
    assert normalize_block_text(text) == text


@FAST
@given(document_st())
def test_json_round_trip(doc: StructuredDocument) -> None:
    data = json.loads(json.dumps(doc.to_dict()))
    assert data == doc.to_dict()
    assert StructuredDocument.from_dict(data) == doc


op_text_st = st.one_of(block_text_st, markdown_st, st.just("   "))


@st.composite
def ops_st(draw: st.DrawFn, doc: StructuredDocument) -> list[Any]:
    section_ids = [*doc.section_ids(), "nope"]
    block_ids = [*doc.block_ids(), "bmissing"]
    sid = st.sampled_from(section_ids)
    bid_ = st.sampled_from(block_ids)
    one = st.one_of(
        st.builds(AppendBlock, sid, op_text_st),
        st.builds(InsertBlock, sid, st.one_of(st.none(), bid_), op_text_st),
        st.builds(ReplaceBlock, sid, bid_, op_text_st),
        st.builds(RemoveBlock, sid, bid_),
        st.builds(
            AddSection,
            heading_st,
            st.integers(1, 6),
            st.lists(op_text_st, max_size=2),
            st.one_of(st.none(), sid),
        ),
        st.builds(RemoveSection, sid),
        st.builds(ReplaceSectionBlocks, sid, st.lists(op_text_st, max_size=2)),
        st.builds(RenameSection, sid, st.one_of(heading_st, st.just(" "), st.just("x ##"))),
    )
    return draw(st.lists(one, max_size=6))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_operations_keep_documents_lossless(data: st.DataObject) -> None:
    doc = data.draw(document_st())
    before = copy.deepcopy(doc.to_dict())
    ops = data.draw(ops_st(doc))
    result = apply_operations(doc, ops)
    assert doc.to_dict() == before
    assert len(result.applied) + len(result.skipped) == len(ops)
    out = result.document
    markdown = render_markdown(out)
    assert render_markdown(parse_markdown(markdown)) == markdown
    assert structure(parse_markdown(markdown)) == structure(out)
    assert len(set(out.block_ids())) == len(out.block_ids())
    assert len(set(out.section_ids())) == len(out.section_ids())


# --------------------------------------------------------------------------------------------------------
# Parsing and rendering


def test_parse_sections_blocks_and_preamble() -> None:
    md = "Intro [mem:a]\n\n# Title #\n\npara\nline two\n\n\n- x\n- y\n\n## Sub ##   \n\n| a | b |\n|---|---|\n"
    doc = parse_markdown(md)
    assert [(s.id, s.heading, s.level) for s in doc.sections] == [
        ("preamble", "", 1),
        ("title", "Title", 1),
        ("sub", "Sub", 2),
    ]
    assert [b.text for b in doc.sections[1].blocks] == ["para\nline two", "- x\n- y"]
    assert doc.sections[2].blocks[0].text == "| a | b |\n|---|---|"
    assert render_markdown(doc) == (
        "Intro [mem:a]\n\n# Title\n\npara\nline two\n\n- x\n- y\n\n## Sub\n\n| a | b |\n|---|---|\n"
    )


def test_no_preamble_when_text_starts_with_heading() -> None:
    doc = parse_markdown("\n\n# A\n\ntext\n")
    assert [s.id for s in doc.sections] == ["a"]


@pytest.mark.parametrize("text", ["", "\n", "  \n\n\t\n"])
def test_empty_markdown_gives_empty_document(text: str) -> None:
    doc = parse_markdown(text)
    assert doc.sections == []
    assert render_markdown(doc) == ""


def test_heading_like_lines_inside_fences_are_block_text() -> None:
    md = "# Real\n\nBefore:\n```python\n# comment\n\n\n## also comment\n```\nafter\n\n~~~\n```\n# x\n~~~\n"
    doc = parse_markdown(md)
    assert len(doc.sections) == 1
    assert [b.text for b in doc.sections[0].blocks] == [
        "Before:\n```python\n# comment\n\n\n## also comment\n```\nafter",
        "~~~\n```\n# x\n~~~",
    ]


def test_fence_closes_only_with_same_char_and_enough_length() -> None:
    doc = parse_markdown("````\n```\n\n~~~\n````\n\n# H\n")
    assert [b.text for b in doc.sections[0].blocks] == ["````\n```\n\n~~~\n````"]
    assert doc.sections[1].heading == "H"


def test_inline_triple_backticks_do_not_open_a_fence() -> None:
    doc = parse_markdown("``` `x` ```\n\n# H\n")
    assert [s.heading for s in doc.sections] == ["", "H"]


def test_unclosed_fence_is_closed_and_swallows_the_rest() -> None:
    doc = parse_markdown("# A\n\n~~~~js\ncode\n\n# not heading\n\n  \n")
    assert len(doc.sections) == 1
    assert doc.sections[0].blocks[0].text == "~~~~js\ncode\n\n# not heading\n~~~~"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# C#", ("C#", 1)),
        ("### a # b ###", ("a # b", 3)),
        ("## x ## ##", ("x", 2)),
        ("######   spaced   ", ("spaced", 6)),
        ("# #hash", ("#hash", 1)),
    ],
)
def test_heading_text_normalisation(line: str, expected: tuple[str, int]) -> None:
    section = parse_markdown(line + "\n").sections[0]
    assert (section.heading, section.level) == expected


@pytest.mark.parametrize("line", ["#nospace", "####### seven", "# #", "#", "   # indented", "#\ttab"])
def test_non_heading_lines_are_text(line: str) -> None:
    doc = parse_markdown(line + "\n")
    assert [(s.id, s.heading) for s in doc.sections] == [("preamble", "")]
    assert doc.sections[0].blocks[0].text == line.rstrip()


def test_crlf_and_trailing_whitespace_are_normalised() -> None:
    doc = parse_markdown("# T\r\n\r\nline one  \r\nline two \t\r\n\r\n\r\n")
    assert doc.sections[0].blocks[0].text == "line one  \nline two"
    assert render_markdown(doc) == "# T\n\nline one  \nline two\n"


@pytest.mark.parametrize("closer", ["```\x85", "```\t ", "```\u2028"])
def test_closing_fence_with_trailing_whitespace_is_stable(closer: str) -> None:
    doc = parse_markdown("```\ncode\n" + closer)
    assert doc.sections[0].blocks[0].text == "```\ncode\n```"
    assert parse_markdown(render_markdown(doc)) == doc


def test_blank_lines_inside_fences_are_kept() -> None:
    text = "```\na\n\n   \n\nb\n```"
    assert parse_markdown(text).sections[0].blocks[0].text == text


def test_render_exact_format() -> None:
    doc = StructuredDocument(
        [
            Section("preamble", "", 1, [Block("p", "intro")]),
            Section("a", "A", 2, []),
            Section("b", "B", 3, [Block("x", "one"), Block("y", "two")]),
        ]
    )
    assert render_markdown(doc) == "intro\n\n## A\n\n### B\n\none\n\ntwo\n"
    assert render_markdown(doc) == render_markdown(doc)
    assert render_markdown(StructuredDocument()) == ""
    assert render_markdown(StructuredDocument([Section("preamble", "", 1, [])])) == ""


def test_section_rejects_bad_level() -> None:
    with pytest.raises(DocumentError):
        Section("s", "S", 7)
    with pytest.raises(DocumentError):
        Section("s", "S", 0)


# --------------------------------------------------------------------------------------------------------
# Ids


@pytest.mark.parametrize(
    ("heading", "slug"),
    [("Hello, World!", "hello-world"), ("  C# / .NET  ", "c-net"), ("!!!", "section"), ("ÜBER 2", "ber-2")],
)
def test_slugify(heading: str, slug: str) -> None:
    assert slugify(heading) == slug


def test_parse_dedupes_section_and_block_ids() -> None:
    doc = parse_markdown("pre\n\n# Preamble\n\n# Foo\n\nsame\n\n# Foo\n\nsame\n\n# foo!\n\nsame\n")
    assert doc.section_ids() == ["preamble", "preamble-2", "foo", "foo-2", "foo-3"]
    assert doc.block_ids() == [bid("pre"), bid("same"), bid("same") + "-2", bid("same") + "-3"]


def test_block_id_is_sha1_prefix() -> None:
    assert block_id_for("hello") == "b" + hashlib.sha1(b"hello").hexdigest()[:8]
    assert block_id_for("hello") == "baaf4c61d"


def test_new_id_helpers_dedupe() -> None:
    doc = parse_markdown("# Foo\n\nx\n\n# Foo\n\ny\n")
    assert new_section_id(doc, "Foo") == "foo-3"
    assert new_section_id(doc, "Bar") == "bar"
    assert new_block_id(doc, "x") == bid("x") + "-2"
    assert new_block_id(doc, "z") == bid("z")


# --------------------------------------------------------------------------------------------------------
# Provenance and tokens


def test_cited_memory_ids_order_and_dedup() -> None:
    text = "a [mem:m2] b [mem:m1] [mem:m2] [mem:] [mem:bad id] [mem:ok-1_x] mem:no"
    assert cited_memory_ids(text) == ("m2", "m1", "ok-1_x")
    assert format_citation("m9") == "[mem:m9]"
    assert cited_memory_ids(format_citation("m9")) == ("m9",)


def test_block_memory_ids_are_always_derived_from_text() -> None:
    block = Block("b1", "x [mem:a] [mem:b] [mem:a]")
    assert block.memory_ids == ("a", "b")
    assert Block("b1", "plain", ("stale",)).memory_ids == ()
    assert dataclasses.replace(block, text="[mem:c]").memory_ids == ("c",)


def test_document_memory_ids_in_order() -> None:
    doc = parse_markdown("[mem:z]\n\n# A\n\n[mem:y] [mem:z]\n\n```\n[mem:x]\n```\n")
    assert doc.sections[1].blocks[0].memory_ids == ("y", "z")
    assert doc.memory_ids() == ("z", "y", "x")


def test_count_tokens() -> None:
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("") == 0
    assert count_tokens("a  b\n\nc_d") == 3


# --------------------------------------------------------------------------------------------------------
# Serialisation


def test_to_dict_shape() -> None:
    doc = parse_markdown("p [mem:m1]\n\n## H\n")
    assert doc.to_dict() == {
        "version": 1,
        "sections": [
            {
                "id": "preamble",
                "heading": "",
                "level": 1,
                "blocks": [{"id": bid("p [mem:m1]"), "text": "p [mem:m1]", "memory_ids": ["m1"]}],
            },
            {"id": "h", "heading": "H", "level": 2, "blocks": []},
        ],
    }


def test_from_dict_rederives_memory_ids_and_allows_omitting_them() -> None:
    data = {
        "version": 1,
        "sections": [{"id": "s", "heading": "S", "level": 2, "blocks": [{"id": "b1", "text": "[mem:q]"}]}],
    }
    assert StructuredDocument.from_dict(data).sections[0].blocks[0].memory_ids == ("q",)


def _doc_dict(**section: Any) -> dict[str, Any]:
    base = {"id": "s", "heading": "S", "level": 2, "blocks": [{"id": "b1", "text": "t", "memory_ids": []}]}
    base.update(section)
    return {"version": 1, "sections": [base]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "must be an object"),
        ({"sections": []}, "missing field 'version'"),
        ({"version": 2, "sections": []}, "unsupported version"),
        ({"version": 1, "sections": {}}, "sections must be a list"),
        ({"version": 1, "sections": [], "x": 1}, "unexpected field 'x'"),
        ({"version": 1, "sections": ["s"]}, "sections[0] must be an object"),
        (_doc_dict(level=0), "level"),
        (_doc_dict(level=True), "level"),
        (_doc_dict(level="2"), "level"),
        (_doc_dict(id=""), "sections[0].id"),
        (_doc_dict(heading=None), "heading must be a string"),
        (_doc_dict(heading="a\nb"), "single line"),
        (_doc_dict(blocks="x"), "blocks must be a list"),
        (_doc_dict(blocks=[{"id": "b1"}]), "missing field 'text'"),
        (_doc_dict(blocks=[{"id": "b1", "text": 3}]), "text must be a string"),
        (_doc_dict(blocks=[{"id": "b1", "text": "t", "memory_ids": "m"}]), "memory_ids"),
        (_doc_dict(blocks=[{"id": "b1", "text": "t"}, {"id": "b1", "text": "u"}]), "duplicate block id"),
        (_doc_dict(extra=1), "unexpected field 'extra'"),
    ],
)
def test_from_dict_errors(data: Any, message: str) -> None:
    with pytest.raises(DocumentError) as info:
        StructuredDocument.from_dict(data)
    assert message in str(info.value)


def test_from_dict_rejects_duplicate_sections_and_late_empty_heading() -> None:
    sec = {"id": "s", "heading": "S", "level": 2, "blocks": []}
    with pytest.raises(DocumentError, match="duplicate section id"):
        StructuredDocument.from_dict({"version": 1, "sections": [sec, sec]})
    late = {"id": "t", "heading": "", "level": 1, "blocks": []}
    with pytest.raises(DocumentError, match="only the first section"):
        StructuredDocument.from_dict({"version": 1, "sections": [sec, late]})
    assert isinstance(DocumentError("x"), ValueError)


# --------------------------------------------------------------------------------------------------------
# Operations

BASE_MD = "Intro.\n\n## Alpha\n\nfirst\n\nsecond\n\n## Beta\n\nonly [mem:m1]\n"


@pytest.fixture
def doc() -> StructuredDocument:
    return parse_markdown(BASE_MD)


def texts(doc: StructuredDocument, section_id: str) -> list[str]:
    section = doc.section(section_id)
    assert section is not None
    return [b.text for b in section.blocks]


def test_append_block(doc: StructuredDocument) -> None:
    result = apply_operations(doc, [AppendBlock("alpha", "\n\nthird [mem:m2]  \n\n")])
    assert result.skipped == []
    assert result.applied == [{"op": "append_block", "section_id": "alpha", "text": "\n\nthird [mem:m2]  \n\n"}]
    new = result.document
    assert texts(new, "alpha") == ["first", "second", "third [mem:m2]"]
    assert new.sections[1].blocks[-1].id == bid("third [mem:m2]")
    assert new.memory_ids() == ("m2", "m1")
    assert result.changed


def test_insert_block_first_and_after(doc: StructuredDocument) -> None:
    first_id = doc.sections[1].blocks[0].id
    result = apply_operations(doc, [InsertBlock("alpha", None, "zero"), InsertBlock("alpha", first_id, "one")])
    assert texts(result.document, "alpha") == ["zero", "first", "one", "second"]


def test_replace_block_keeps_id_and_position(doc: StructuredDocument) -> None:
    target = doc.sections[1].blocks[0]
    result = apply_operations(doc, [ReplaceBlock("alpha", target.id, "changed [mem:m3]")])
    new_block = result.document.sections[1].blocks[0]
    assert (new_block.id, new_block.text, new_block.memory_ids) == (target.id, "changed [mem:m3]", ("m3",))
    assert result.document.sections[1].blocks[1] is doc.sections[1].blocks[1]


def test_remove_block(doc: StructuredDocument) -> None:
    result = apply_operations(doc, [RemoveBlock("alpha", doc.sections[1].blocks[0].id)])
    assert texts(result.document, "alpha") == ["second"]


def test_add_section_positions_and_ids(doc: StructuredDocument) -> None:
    result = apply_operations(
        doc,
        [
            AddSection("Gamma", 3, ["g1", "g2"]),
            AddSection("Alpha", blocks=["a"], after_section_id="preamble"),
            AddSection("Whatever", new_id="beta"),
            AddSection("Custom", new_id="custom-id", after_section_id="alpha"),
        ],
    )
    assert result.skipped == []
    new = result.document
    assert new.section_ids() == ["preamble", "alpha-2", "alpha", "custom-id", "beta", "gamma", "beta-2"]
    gamma = new.section("gamma")
    assert gamma is not None and (gamma.heading, gamma.level) == ("Gamma", 3)
    assert texts(new, "gamma") == ["g1", "g2"]
    assert new.section("alpha-2").level == 2  # type: ignore[union-attr]
    assert render_markdown(new).startswith("Intro.\n\n## Alpha\n\na\n\n## Alpha\n\nfirst")


def test_add_section_normalises_heading(doc: StructuredDocument) -> None:
    result = apply_operations(doc, [AddSection("  Multi\nline  ##", 2, [])])
    assert result.document.sections[-1].heading == "Multi line"
    assert result.document.sections[-1].id == "multi-line"


def test_remove_section(doc: StructuredDocument) -> None:
    result = apply_operations(doc, [RemoveSection("alpha")])
    assert result.document.section_ids() == ["preamble", "beta"]
    assert render_markdown(result.document) == "Intro.\n\n## Beta\n\nonly [mem:m1]\n"


def test_replace_section_blocks_reuses_unchanged_ids(doc: StructuredDocument) -> None:
    old = doc.sections[1].blocks
    result = apply_operations(doc, [ReplaceSectionBlocks("alpha", ["second", "new", "first", "first"])])
    new_blocks = result.document.sections[1].blocks
    assert [b.text for b in new_blocks] == ["second", "new", "first", "first"]
    assert new_blocks[0] is old[1]
    assert new_blocks[2] is old[0]
    assert new_blocks[1].id == bid("new")
    assert new_blocks[3].id == bid("first") + "-2"
    emptied = apply_operations(doc, [ReplaceSectionBlocks("alpha", [])]).document
    assert texts(emptied, "alpha") == []


def test_rename_section_keeps_id(doc: StructuredDocument) -> None:
    result = apply_operations(doc, [RenameSection("beta", "Beta Two ##")])
    section = result.document.sections[2]
    assert (section.id, section.heading, section.level) == ("beta", "Beta Two", 2)
    assert section.blocks == doc.sections[2].blocks


def test_ops_can_target_sections_and_blocks_made_earlier_in_the_batch(doc: StructuredDocument) -> None:
    result = apply_operations(doc, [AddSection("New"), AppendBlock("new", "x"), ReplaceBlock("new", bid("x"), "y")])
    assert result.skipped == []
    assert texts(result.document, "new") == ["y"]


@pytest.mark.parametrize(
    ("op", "reason"),
    [
        (AppendBlock("nope", "x"), "unknown section_id: nope"),
        (InsertBlock("alpha", "bzzz", "x"), "unknown block_id: bzzz"),
        (
            InsertBlock("beta", bid("first"), "x"),
            f"block_id {bid('first')} belongs to section alpha, not beta",
        ),
        (ReplaceBlock("alpha", "bzzz", "x"), "unknown block_id: bzzz"),
        (
            ReplaceBlock("alpha", bid("only [mem:m1]"), "x"),
            f"block_id {bid('only [mem:m1]')} belongs to section beta, not alpha",
        ),
        (RemoveBlock("beta", bid("second")), f"block_id {bid('second')} belongs to section alpha, not beta"),
        (RemoveBlock("nope", bid("second")), "unknown section_id: nope"),
        (AddSection("X", after_section_id="nope"), "unknown after_section_id: nope"),
        (RemoveSection("nope"), "unknown section_id: nope"),
        (ReplaceSectionBlocks("nope", []), "unknown section_id: nope"),
        (RenameSection("nope", "X"), "unknown section_id: nope"),
        (AppendBlock("alpha", "  \n\t\n"), "block text is empty"),
        (ReplaceBlock("alpha", bid("first"), ""), "block text is empty"),
        (AddSection("X", blocks=["ok", " "]), "block text is empty"),
        (ReplaceSectionBlocks("alpha", ["ok", ""]), "block text is empty"),
        (AddSection("  ", blocks=["x"]), "heading is empty"),
        (AddSection("## ##"), "heading is empty"),
        (RenameSection("alpha", " \n "), "heading is empty"),
        (AppendBlock("alpha", "one\n\ntwo"), "block text must be a single markdown block"),
        (InsertBlock("alpha", None, "text\n# Heading"), "block text must be a single markdown block"),
        (ReplaceBlock("alpha", bid("first"), "## H\n\nx"), "block text must be a single markdown block"),
        (ReplaceSectionBlocks("alpha", ["a\n\nb"]), "block text must be a single markdown block"),
        (AddSection("X", blocks=["```\na\n```\n\nb"]), "block text must be a single markdown block"),
    ],
)
def test_skip_reasons(doc: StructuredDocument, op: Any, reason: str) -> None:
    result = apply_operations(doc, [op, AppendBlock("beta", "still applied")])
    assert result.skipped == [{**op.to_dict(), "reason": reason}]
    assert result.applied == [{"op": "append_block", "section_id": "beta", "text": "still applied"}]
    # The skipped op left nothing behind: only the follow-up append differs from the input.
    assert result.document.sections[:2] == doc.sections[:2]
    assert texts(result.document, "beta") == ["only [mem:m1]", "still applied"]


def test_block_text_with_fence_containing_blank_lines_and_headings_is_accepted(
    doc: StructuredDocument,
) -> None:
    text = "Example:\n```md\n# Title\n\ntext\n```"
    result = apply_operations(doc, [AppendBlock("beta", text)])
    assert result.skipped == []
    assert texts(result.document, "beta")[-1] == text
    assert parse_markdown(render_markdown(result.document)).sections[2].blocks[-1].text == text


def test_unclosed_fence_in_op_text_is_closed(doc: StructuredDocument) -> None:
    result = apply_operations(doc, [AppendBlock("alpha", "```\ncode"), AddSection("After", blocks=["x"])])
    assert texts(result.document, "alpha")[-1] == "```\ncode\n```"
    assert structure(parse_markdown(render_markdown(result.document))) == structure(result.document)


def test_input_document_is_not_mutated_and_untouched_parts_are_shared(doc: StructuredDocument) -> None:
    before = copy.deepcopy(doc)
    before_md = render_markdown(doc)
    ops = [
        AppendBlock("alpha", "x"),
        RenameSection("alpha", "Renamed"),
        ReplaceSectionBlocks("alpha", ["y"]),
        RemoveSection("preamble"),
        AddSection("Z", blocks=["z"]),
    ]
    result = apply_operations(doc, ops)
    assert doc == before
    assert render_markdown(doc) == before_md
    assert result.document.sections[1] is doc.sections[2]
    assert render_markdown(result.document) == "## Renamed\n\ny\n\n## Beta\n\nonly [mem:m1]\n\n## Z\n\nz\n"
    assert BASE_MD.split("## Beta")[1] in render_markdown(result.document)


def test_apply_rejects_non_operations(doc: StructuredDocument) -> None:
    with pytest.raises(TypeError):
        apply_operations(doc, [{"op": "remove_section", "section_id": "alpha"}])  # type: ignore[list-item]


def test_normalize_helpers() -> None:
    assert normalize_block_text("\r\n\r\n  - a\r\n  - b  \r\n\r\n") == "  - a\n  - b"
    assert normalize_heading("  a\tb  # #") == "a b"
    with pytest.raises(DocumentError, match="single markdown block"):
        normalize_block_text("# H")
    with pytest.raises(DocumentError, match="heading is empty"):
        normalize_heading("#")


# --------------------------------------------------------------------------------------------------------
# Operation dicts

ALL_OPS = [
    AppendBlock("s", "t"),
    InsertBlock("s", None, "t"),
    InsertBlock("s", "b1", "t"),
    ReplaceBlock("s", "b1", "t"),
    RemoveBlock("s", "b1"),
    AddSection("H", 3, ("a", "b"), "s", "nid"),
    AddSection("H"),
    RemoveSection("s"),
    ReplaceSectionBlocks("s", ("a",)),
    RenameSection("s", "New"),
]


@pytest.mark.parametrize("op", ALL_OPS, ids=lambda op: op.op)
def test_operation_dict_round_trip(op: Any) -> None:
    data = op.to_dict()
    assert data["op"] == op.op
    assert json.loads(json.dumps(data)) == data
    assert parse_operation(data) == op


def test_operation_dict_shapes() -> None:
    assert AddSection("H", blocks=["a"]).to_dict() == {
        "op": "add_section",
        "heading": "H",
        "level": 2,
        "blocks": ["a"],
        "after_section_id": None,
        "new_id": None,
    }
    assert parse_operation({"op": "add_section", "heading": "H"}) == AddSection("H", 2, (), None, None)
    assert RemoveBlock("s", "b").to_dict() == {"op": "remove_block", "section_id": "s", "block_id": "b"}


def test_add_section_constructor_validates_level() -> None:
    with pytest.raises(DocumentError, match="level"):
        AddSection("H", 0)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("append_block", "must be an object"),
        ({"section_id": "s"}, "missing field 'op'"),
        ({"op": "explode"}, "unknown op: 'explode'"),
        ({"op": 3}, "unknown op"),
        ({"op": "append_block", "section_id": "s"}, "missing field 'text'"),
        ({"op": "append_block", "section_id": "s", "text": "t", "extra": 1}, "unexpected field 'extra'"),
        ({"op": "append_block", "section_id": 1, "text": "t"}, "field 'section_id' must be a string"),
        ({"op": "insert_block", "section_id": "s", "text": "t"}, "missing field 'after_block_id'"),
        ({"op": "insert_block", "section_id": "s", "after_block_id": 5, "text": "t"}, "'after_block_id'"),
        (
            {"op": "replace_block", "section_id": "s", "block_id": None, "text": "t"},
            "'block_id' must be a string",
        ),
        ({"op": "remove_block", "section_id": "s"}, "missing field 'block_id'"),
        ({"op": "add_section"}, "missing field 'heading'"),
        ({"op": "add_section", "heading": "H", "level": 7}, "'level' must be an integer between 1 and 6"),
        ({"op": "add_section", "heading": "H", "level": 0}, "'level'"),
        ({"op": "add_section", "heading": "H", "level": True}, "'level'"),
        ({"op": "add_section", "heading": "H", "level": "2"}, "'level'"),
        ({"op": "add_section", "heading": "H", "blocks": "x"}, "'blocks' must be a list of strings"),
        ({"op": "add_section", "heading": "H", "blocks": [1]}, "'blocks' must be a list of strings"),
        ({"op": "add_section", "heading": "H", "new_id": 3}, "'new_id'"),
        ({"op": "add_section", "heading": "H", "after_section_id": []}, "'after_section_id'"),
        ({"op": "remove_section"}, "missing field 'section_id'"),
        ({"op": "replace_section_blocks", "section_id": "s"}, "missing field 'blocks'"),
        ({"op": "rename_section", "section_id": "s", "heading": "x"}, "unexpected field 'heading'"),
        ({"op": "rename_section", "section_id": "s", "new_heading": None}, "'new_heading' must be a string"),
    ],
)
def test_parse_operation_errors(data: Any, message: str) -> None:
    with pytest.raises(DocumentError) as info:
        parse_operation(data)
    assert message in str(info.value)
