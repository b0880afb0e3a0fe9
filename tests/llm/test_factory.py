"""LLM settings: per-operation resolution and fallbacks, start-up errors, shared clients, keys kept out of repr."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindbank.config import Settings
from mindbank.engine.synthesis.extractive import ExtractiveSynthesizer
from mindbank.engine.synthesis.llm import LLMSynthesizer
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.providers.llm.base import ManagedLLM
from mindbank.providers.llm.factory import LLMConfig, build_llms, resolve_llm_config
from mindbank.service.facade import MindBank


def test_default_is_extractive_everywhere() -> None:
    assert all(resolve_llm_config(Settings(), op) is None for op in ("retain", "consolidation", "reflect", "refresh"))
    assert build_llms(Settings()) == {"retain": None, "consolidation": None, "reflect": None, "refresh": None}


def test_global_settings_apply_to_every_operation_with_provider_defaults() -> None:
    s = Settings(llm_provider="openai", llm_api_key="k", llm_base_url="http://x/v1", llm_timeout=9, llm_max_retries=1)
    config = resolve_llm_config(s, "retain")
    assert config == LLMConfig("retain", "openai", "gpt-4o-mini", "k", "http://x/v1", 9, 1)
    assert resolve_llm_config(Settings(llm_provider="anthropic"), "reflect").model == "claude-haiku-4-5"  # type: ignore[union-attr]


def test_overrides_apply_field_by_field_and_never_across_providers() -> None:
    s = Settings(
        llm_provider="openai",
        llm_model="gpt-4o",
        llm_api_key="openai-key",
        reflect_llm_model="gpt-4o-mini",
        retain_llm_provider="extractive",
        refresh_llm_provider="anthropic",
        refresh_llm_api_key="anthropic-key",
    )
    assert resolve_llm_config(s, "retain") is None  # this operation stays offline
    reflect = resolve_llm_config(s, "reflect")
    assert reflect is not None and (reflect.provider, reflect.model, reflect.api_key) == ("openai", "gpt-4o-mini",
                                                                                         "openai-key")  # fmt: skip
    refresh = resolve_llm_config(s, "refresh")
    # anthropic inherits neither the OpenAI model nor its key
    assert refresh is not None and (refresh.provider, refresh.model, refresh.api_key) == (
        "anthropic", "claude-haiku-4-5", "anthropic-key",
    )  # fmt: skip


def test_refresh_falls_back_to_the_reflect_overrides() -> None:
    s = Settings(reflect_llm_provider="openai", reflect_llm_base_url="http://ollama:11434/v1", reflect_llm_model="qwen")
    refresh = resolve_llm_config(s, "refresh")
    assert refresh is not None and (refresh.provider, refresh.model, refresh.base_url) == (
        "openai", "qwen", "http://ollama:11434/v1",
    )  # fmt: skip
    assert resolve_llm_config(s, "consolidation") is None


def test_bad_settings_fail_at_start_up_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="MINDBANK_CONSOLIDATION_LLM_PROVIDER: unknown provider 'gemini'"):
        resolve_llm_config(Settings(consolidation_llm_provider="gemini"), "consolidation")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ValueError, match="MINDBANK_LLM_API_KEY"):
        build_llms(Settings(llm_provider="openai"))  # the public endpoint needs a key
    with pytest.raises(ValueError, match="anthropic"):
        build_llms(Settings(llm_provider="anthropic"))
    local = build_llms(Settings(llm_provider="openai", llm_base_url="http://localhost:11434/v1"))
    assert isinstance(local["reflect"], ManagedLLM)  # a local server needs no key


def test_operations_with_the_same_settings_share_one_client_and_one_cap() -> None:
    llms = build_llms(
        Settings(llm_provider="openai", llm_api_key="k", refresh_llm_model="bigger", llm_max_concurrent=3)
    )
    retain, reflect, refresh = llms["retain"], llms["reflect"], llms["refresh"]
    assert isinstance(retain, ManagedLLM) and isinstance(refresh, ManagedLLM)
    assert retain is reflect is llms["consolidation"] and refresh is not reflect
    assert refresh.semaphore is retain.semaphore and refresh.model == "bigger"


def test_keys_never_appear_in_reprs() -> None:
    s = Settings(llm_provider="openai", llm_api_key="sk-very-secret", refresh_llm_api_key="sk-other-secret")
    config = resolve_llm_config(s, "refresh")
    client = build_llms(s)["refresh"]
    for text in (repr(s), repr(config), repr(client), repr(getattr(client, "inner", None))):
        assert "secret" not in text


def test_settings_pick_the_llm_synthesizer_only_for_a_refresh_llm(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    base = {"database_url": str(tmp_path / "a.db"), "llm_base_url": "http://localhost:1/v1"}
    mb = MindBank.open(Settings(**base, llm_provider="openai", refresh_llm_provider="extractive"), embedder=embedder)
    assert isinstance(mb.synthesizer, ExtractiveSynthesizer) and mb.llms["reflect"] is not None
    mb.close()
    only_refresh = Settings(
        database_url=base["database_url"], refresh_llm_provider="openai", refresh_llm_base_url="http://localhost:1/v1"
    )
    mb = MindBank.open(only_refresh, embedder=embedder)
    assert isinstance(mb.synthesizer, LLMSynthesizer) and mb.llms["reflect"] is None
    mb.close()
