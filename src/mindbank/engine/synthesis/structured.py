"""Schema-checked LLM output: a small JSON Schema checker and the ``response_schema`` extraction call.

Spec "Structured Output"; reference facts §4.8. Request schemas are validated up front
(``domain.trigger.validate_response_schema``, 422 on failure); this module checks what a model *returned* against
such a schema. Only the subset those schemas may use is checked (``type``, ``properties``, ``required``, ``items``,
``enum``, ``additionalProperties: false``): enough to refuse a reply that does not fit, without a dependency.
"""

from __future__ import annotations

import json
from typing import Any

from mindbank.providers.llm.base import LLM, LLMError, LLMTransientError, TokenUsage, system, user

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def schema_problems(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (empty list: it fits), each naming its JSON path.

    ``type`` may be a name or a list of names; ``bool`` never counts as a number (JSON keeps them apart)."""
    problems: list[str] = []
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        ok = any(
            isinstance(value, _TYPES.get(k, (object,))) and not (k in ("number", "integer") and isinstance(value, bool))
            for k in kinds
        )
        if not ok:
            return [f"{path}: expected {' or '.join(kinds)}, got {_json_type(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for name in schema.get("required") or ():
            if name not in value:
                problems.append(f"{path}: missing required property '{name}'")
        for name, item in value.items():
            if name in properties:
                problems.extend(schema_problems(item, properties[name], f"{path}.{name}"))
            elif schema.get("additionalProperties") is False:
                problems.append(f"{path}: unexpected property '{name}'")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problems.extend(schema_problems(item, schema["items"], f"{path}[{i}]"))
    return problems


def _json_type(value: Any) -> str:
    for name, kinds in _TYPES.items():
        if isinstance(value, kinds) and not (name in ("number", "integer") and isinstance(value, bool)):
            return "integer" if name == "number" and isinstance(value, int) else name
    return type(value).__name__


class StructuredOutputError(Exception):
    """The model's reply did not fit the schema (or was not JSON). Transient provider errors are not wrapped."""


EXTRACT_PROMPT = (
    "You fill a JSON object from a text. Use only what the text says; leave out optional fields it does not "
    "support. Reply with the JSON object only."
)


def extract_structured(
    llm: LLM, *, content: str, schema: dict[str, Any], scope: str = "structured_output"
) -> tuple[Any, TokenUsage]:
    """One schema-constrained call extracting an object matching ``schema`` from ``content`` (temperature 0).
    Returns ``(object, tokens spent)``.

    Raises :class:`StructuredOutputError` for a reply that is not JSON or does not fit, ``LLMTransientError`` as is
    (the caller's retry policy decides), and :class:`StructuredOutputError` for other provider failures."""
    messages = [
        system(EXTRACT_PROMPT),
        user(f"Schema:\n{json.dumps(schema)}\n\nText:\n{content}"),
    ]
    try:
        reply = llm.chat(
            messages, response_schema=schema, schema_name="structured_output", temperature=0.0, scope=scope
        )
    except LLMTransientError:
        raise
    except LLMError as exc:
        raise StructuredOutputError(str(exc)) from exc
    if reply.parsed is None:
        raise StructuredOutputError("the model's reply is not JSON")
    problems = schema_problems(reply.parsed, schema)
    if problems:
        raise StructuredOutputError("the reply does not fit the schema: " + "; ".join(problems[:5]))
    return reply.parsed, reply.usage
