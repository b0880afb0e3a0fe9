"""Every MCP tool enforces at least the limits of its HTTP route: for each argument the route also takes (a query
parameter or a body field of the same name), every bound the route publishes in its OpenAPI schema (``maxLength``,
``maxItems``, ``maximum``, ``minimum``, ``minLength``, ``maxProperties``, ``pattern``, and the same for list
items) is in the tool's input schema, as strict or stricter — and a value just past each bound is refused by the
tool as it is by the route."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp.client import Client

from mindbank.mcp import build_server
from mindbank.service.facade import MindBank

BANK = "/v1/default/banks/{bank_id}"
# tool -> (method, path) of its HTTP route; ``items`` routes compare with the schema of one retained item
ROUTES: dict[str, tuple[str, str]] = {
    "retain": ("post", BANK + "/memories"),
    "recall": ("post", BANK + "/memories/recall"),
    "reflect": ("post", BANK + "/reflect"),
    "list_tags": ("get", BANK + "/tags"),
    "list_mental_models": ("get", BANK + "/mental-models"),
    "create_mental_model": ("post", BANK + "/mental-models"),
    "update_mental_model": ("patch", BANK + "/mental-models/{mental_model_id}"),
    "list_operations": ("get", BANK + "/operations"),
    "list_documents": ("get", BANK + "/documents"),
    "list_directives": ("get", BANK + "/directives"),
    "create_directive": ("post", BANK + "/directives"),
    "get_knowledge_base_tree": ("get", BANK + "/knowledge-base/tree"),
    "search_knowledge_base": ("get", BANK + "/knowledge-base/search"),
    "create_knowledge_folder": ("post", BANK + "/knowledge-base/folders"),
    "create_knowledge_page": ("post", BANK + "/knowledge-base/pages"),
    "update_knowledge_node": ("patch", BANK + "/knowledge-base/nodes/{node_id}"),
}
UPPER = ("maxLength", "maxItems", "maximum", "maxProperties")
LOWER = ("minLength", "minimum")


def _resolve(schema: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """A schema with ``$ref`` followed and a nullable ``anyOf`` reduced to its non-null branch."""
    while True:
        if "$ref" in schema:
            target: Any = document
            for part in schema["$ref"].lstrip("#/").split("/"):
                target = target[part]
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        elif "anyOf" in schema:
            branches = [b for b in schema["anyOf"] if b.get("type") != "null"]
            if len(branches) != 1:
                return schema
            schema = {**branches[0], **{k: v for k, v in schema.items() if k != "anyOf"}}
        else:
            return schema


def _http_fields(document: dict[str, Any], method: str, path: str, tool: str) -> dict[str, dict[str, Any]]:
    operation = document["paths"][path][method]
    found = {p["name"]: _resolve(p["schema"], document) for p in operation.get("parameters", []) if "schema" in p}
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body is not None:
        body = _resolve(body, document)
        if tool == "retain":
            body = _resolve(_resolve(body["properties"]["items"], document)["items"], document)
        found |= {name: _resolve(s, document) for name, s in body.get("properties", {}).items()}
    return found


def _compare(tool: str, name: str, http: dict[str, Any], mcp: dict[str, Any], document: dict[str, Any]) -> list[str]:
    problems = []
    for key in UPPER:
        if key in http and not (key in mcp and mcp[key] <= http[key]):
            problems.append(f"{tool}.{name}: {key} {mcp.get(key)} (HTTP {http[key]})")
    for key in LOWER:
        if key in http and not (key in mcp and mcp[key] >= http[key]):
            problems.append(f"{tool}.{name}: {key} {mcp.get(key)} (HTTP {http[key]})")
    if "pattern" in http and mcp.get("pattern") != http["pattern"]:
        problems.append(f"{tool}.{name}: pattern {mcp.get('pattern')!r} (HTTP {http['pattern']!r})")
    if "items" in http and "items" in mcp:
        inner_http, inner_mcp = _resolve(http["items"], document), _resolve(mcp["items"], mcp)
        problems += _compare(tool, f"{name}[]", inner_http, inner_mcp, document)
    return problems


@pytest.fixture
def schemas(mindbank: MindBank) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    from mindbank.server import create_app

    with TestClient(create_app(mindbank, run_worker=False), base_url="http://localhost") as http:
        document = http.get("/openapi.json").json()

    async def listing() -> dict[str, dict[str, Any]]:
        async with Client(build_server(mindbank)) as client:
            return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    return document, asyncio.run(listing())


def test_every_tool_argument_is_bounded_as_its_http_field(
    schemas: tuple[dict[str, Any], dict[str, dict[str, Any]]],
) -> None:
    document, tools = schemas
    problems: list[str] = []
    compared = 0
    for tool, (method, path) in ROUTES.items():
        http = _http_fields(document, method, path, tool)
        schema = tools[tool]
        for name, prop in schema["properties"].items():
            if name in http:
                compared += 1
                problems += _compare(tool, name, http[name], _resolve(prop, schema), document)
    assert compared > 40  # the table reaches the arguments it means to
    assert not problems, "\n".join(problems)


OVER_LIMIT: list[tuple[str, dict[str, Any]]] = [
    ("list_documents", {"offset": 10**15}),
    ("list_directives", {"offset": 10**15}),
    ("list_directives", {"tags": [f"t{i}" for i in range(500)]}),
    ("create_directive", {"name": "n", "content": "c", "priority": 2**31}),
    ("create_directive", {"name": "n", "content": "c", "tags": ["x" * 10_000]}),
    ("recall", {"query": "q", "limit": 10**15}),
    ("recall", {"query": "q", "tags": [f"t{i}" for i in range(500)]}),
    ("get_knowledge_base_tree", {"tags": [f"t{i}" for i in range(500)]}),
    ("list_mental_models", {"offset": 10**15}),
]


@pytest.mark.parametrize(("tool", "arguments"), OVER_LIMIT)
def test_a_value_past_a_limit_is_a_tool_error_and_writes_nothing(mindbank: MindBank, tool: str,
                                                                 arguments: dict[str, Any]) -> None:  # fmt: skip
    before = mindbank.store.dump()  # type: ignore[attr-defined]

    async def call() -> Any:
        async with Client(build_server(mindbank)) as client:
            return await client.call_tool(tool, {"bank_id": "b", **arguments})

    result = asyncio.run(call())
    assert result.is_error, (tool, arguments)
    assert mindbank.store.dump() == before  # type: ignore[attr-defined]
