"""Every request model refuses a key it does not know: a 422 naming the key, on both stores, nothing written.

The models are found by walking the app's routes (every JSON body) and, from each body model, every model its
fields nest (items, traits, triggers, tag groups ...): a new request model is covered without being listed here.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import pytest
from conftest import Served
from fastapi import params
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError

from mindbank.api.app import ROUTERS
from mindbank.api.schemas import RetainRequest
from mindbank.domain.transfer.template import TEMPLATE_VERSION

UNKNOWN = "zz_not_a_field"


def json_routes() -> list[APIRoute]:
    """Every route with a JSON body (multipart uploads are forms: their parts are named by the route)."""
    found = []
    for module in ROUTERS:
        for route in module.router.routes:
            body = route.body_field if isinstance(route, APIRoute) else None
            if body is not None and not isinstance(body.field_info, params.Form | params.File):
                found.append(route)
    return found


def nested_models(annotation: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation names, at any depth (unions, lists, dicts, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from nested_models(arg)


def request_models() -> list[type[BaseModel]]:
    """Every model a JSON body can carry, each once."""
    seen: dict[type[BaseModel], None] = {}
    todo = [m for route in json_routes() for m in nested_models(route.body_field.field_info.annotation)]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen[model] = None
        for field in model.model_fields.values():
            todo.extend(nested_models(field.annotation))
    return sorted(seen, key=lambda m: (m.__module__, m.__qualname__))


def test_the_walk_finds_the_known_models() -> None:
    names = {m.__name__ for m in request_models()}
    # a sample across routers and nesting levels: the walk reaches nested models, not just bodies
    assert {"RetainRequest", "MemoryItem", "UpdateWebhookRequest", "WebhookHttpConfig", "DispositionTraits",
            "UpdateDispositionRequest", "TagGroupLeaf", "MentalModelTrigger", "ReflectRequest"} <= names  # fmt: skip
    assert len(json_routes()) >= 25
    assert list(nested_models(dict[str, list[Annotated[RetainRequest, "doc"]] | None])) == [RetainRequest]


@pytest.mark.parametrize("model", request_models(), ids=lambda m: m.__name__)
def test_every_request_model_refuses_an_unknown_key(model: type[BaseModel]) -> None:
    with pytest.raises(ValidationError) as refused:
        model.model_validate({UNKNOWN: 1})
    assert any(e["type"] == "extra_forbidden" and e["loc"][-1] == UNKNOWN for e in refused.value.errors())


def _path(route: APIRoute) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: "b" if m.group(1) == "bank_id" else "x1", route.path)


def _body(route: APIRoute) -> dict[str, Any]:
    """An unknown key; a plain-object body (the template import, validated as a ``BankTemplate`` by the service,
    which reports the first problem) also gets the one field it requires, so the unknown key is that problem."""
    if list(nested_models(route.body_field.field_info.annotation)):
        return {UNKNOWN: 1}
    assert route.path.endswith("/import"), route.path  # a new plain-object body: give it its required fields here
    return {"version": TEMPLATE_VERSION, UNKNOWN: 1}


def test_every_json_body_refuses_an_unknown_key_over_http(served: Callable[..., Served]) -> None:
    s = served()
    s.http.put("/v1/default/banks/b", json={"name": "B"}).raise_for_status()
    before = s.dump()
    for route in json_routes():
        for method in route.methods:
            response = s.http.request(method, _path(route), json=_body(route))
            where = f"{method} {route.path}"
            assert response.status_code == 422, (where, response.status_code, response.text)
            detail = response.json()["detail"]
            if isinstance(detail, str):
                assert UNKNOWN in detail, (where, detail)
            else:
                assert any(UNKNOWN in map(str, e["loc"]) for e in detail), (where, detail)
    # the template's bank section takes the reference's settings mindbank has no use for (reported back as
    # config_ignored, so the reference's own templates import) and refuses any other key
    template = {"version": TEMPLATE_VERSION, "bank": {UNKNOWN: 1}}
    response = s.http.post("/v1/default/banks/b/import", json=template)
    assert response.status_code == 422 and UNKNOWN in response.text, response.text
    assert s.dump() == before


def test_disposition_traits_one_rule_all_three_each_1_to_5(served: Callable[..., Served]) -> None:
    """``PUT /profile`` and a bank's ``disposition`` take the same ``DispositionTraits``: every trait, 1-5."""
    s = served()
    full = {"skepticism": 4, "literalism": 3, "empathy": 2}
    assert s.http.put("/v1/default/banks/b", json={"disposition": full}).json()["disposition"] == full
    before = s.dump()
    for path in ("/v1/default/banks/b", "/v1/default/banks/b/profile"):
        for traits, named in (
            ({"skepticism": 5, "literalism": 5}, "empathy"),
            ({**full, "literalism": 0}, "literalism"),
            ({**full, "skepticism": 6}, "skepticism"),
            ({**full, "empathy": "3"}, "empathy"),
        ):
            response = s.http.put(path, json={"disposition": traits})
            assert response.status_code == 422, (path, traits, response.text)
            assert any(e["loc"][-2:] == ["disposition", named] for e in response.json()["detail"]), response.text
    assert s.dump() == before
    # the flat spellings still set one trait each over the defaults (3)
    flat = s.http.put("/v1/default/banks/b", json={"disposition_empathy": 5}).json()["disposition"]
    assert flat == {"skepticism": 3, "literalism": 3, "empathy": 5}
    assert s.http.put("/v1/default/banks/b/profile", json={"disposition": full}).json()["disposition"] == full
