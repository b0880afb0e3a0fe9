"""Wire compatibility of the knowledge base: every knowledge-base response (and the model list with
``exclude_knowledge_pages``) validates against the reference's own OpenAPI component schemas
(``../shared/reference/hindsight-wire/openapi.json``, Hindsight 1.1.0), with ``jsonschema``. Extra fields are allowed
(the reference's schemas do not forbid them); a missing required field, a wrong type or a wrong enum value fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from mindbank.service.facade import MindBank

OPENAPI = Path(__file__).resolve().parents[3] / "shared" / "reference" / "hindsight-wire" / "openapi.json"
B = "/v1/default/banks/b"
KB = f"{B}/knowledge-base"


@pytest.fixture(scope="module")
def reference() -> Registry:
    if not OPENAPI.exists():
        pytest.skip("the reference's OpenAPI document (../shared/reference) is not available")
    document = json.loads(OPENAPI.read_text())
    return Registry().with_resource("openapi.json", Resource.from_contents(document, default_specification=DRAFT202012))


def check(registry: Registry, schema: str, body: Any) -> None:
    """Validate ``body`` against the reference's ``#/components/schemas/<schema>``; every error is reported."""
    validator = Draft202012Validator({"$ref": f"openapi.json#/components/schemas/{schema}"}, registry=registry)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(body)]
    assert errors == [], f"{schema}: {errors}"


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_knowledge_base_responses_match_the_reference_schemas(
    client: TestClient, mindbank: MindBank, reference: Registry
) -> None:
    ok(client.post(f"{B}/memories", json={"items": [{"content": "Alice: I run marathons.", "tags": ["user:alice"]}]}))
    folder = ok(client.post(f"{KB}/folders", json={"name": "People"}), 201)
    check(reference, "KnowledgeNode", folder)
    created = ok(client.post(f"{KB}/pages", json={"name": "Alice", "source_query": "What does Alice do?",
                                                 "parent_id": folder["id"], "tags": ["user:alice"],
                                                 "trigger": {"fact_types": ["world"]}}), 201)  # fmt: skip
    check(reference, "CreateKnowledgePageResponse", created)
    empty_page = ok(client.post(f"{KB}/pages", json={"name": "Empty", "source_query": "Nothing?"}), 201)
    mindbank.wait_for("b", created["operation_id"], timeout=30)
    mindbank.wait_for("b", empty_page["operation_id"], timeout=30)

    tree = ok(client.get(f"{KB}/tree"))
    check(reference, "KnowledgeTreeResponse", tree)
    page_node = tree["roots"][0]["children"][0]
    assert page_node["is_stale"] is False and page_node["trigger"]["fact_types"] == ["world"]
    check(reference, "KnowledgeTreeResponse", ok(client.get(f"{KB}/tree", params={"tags": ["user:alice"]})))

    check(reference, "KnowledgePageResponse", ok(client.get(f"{KB}/pages/{created['page_id']}")))
    check(reference, "KnowledgePageResponse", ok(client.get(f"{KB}/pages/{empty_page['page_id']}")))
    check(reference, "KnowledgePageSearchResponse", ok(client.get(f"{KB}/search", params={"q": "marathon"})))
    check(reference, "KnowledgePageBundleResponse", ok(client.get(f"{KB}/export")))
    moved = ok(client.patch(f"{KB}/nodes/{created['page_id']}", json={"parent_id": None, "trigger": {"mode": "full"}}))
    check(reference, "KnowledgeNode", moved)
    check(reference, "KnowledgeNode", ok(client.patch(f"{KB}/nodes/{folder['id']}", json={"name": "Friends"})))

    listing = ok(client.get(f"{B}/mental-models", params={"exclude_knowledge_pages": "true", "detail": "full"}))
    check(reference, "MentalModelListResponse", listing)
    every = ok(client.get(f"{B}/mental-models", params={"detail": "full"}))
    check(reference, "MentalModelListResponse", every)
    assert {m["is_knowledge_page"] for m in every["items"]} == {True}
    check(reference, "MentalModelResponse", ok(client.get(f"{B}/mental-models/{created['mental_model_id']}")))
    ok(client.delete(f"{KB}/nodes/{folder['id']}"))


def test_the_schemas_catch_a_broken_shape(reference: Registry) -> None:
    """A guard against a check that cannot fail: a node without its kind, or with a kind the enum lacks, fails."""
    with pytest.raises(AssertionError, match="kind"):
        check(reference, "KnowledgeNode", {"id": "x", "name": "n"})
    with pytest.raises(AssertionError, match="'shelf' is not one of"):
        check(reference, "KnowledgeTreeResponse", {"roots": [{"id": "x", "name": "n", "kind": "shelf"}]})
