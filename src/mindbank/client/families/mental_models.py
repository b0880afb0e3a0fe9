"""Client methods over mental models: create, list, get, update, delete, refresh, dry run, clear, revert, history."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import TypeAdapter

from mindbank.client._wire import (
    Detail,
    Request,
    Trigger,
    bank_path,
    child_path,
    clean,
    endpoint,
    listed,
    model_settings_body,
)
from mindbank.client.models import (
    CreateMentalModelResponse,
    DryRunResult,
    HistoryEntry,
    MentalModel,
    MentalModelList,
    RefreshResponse,
    StatusResponse,
)

_HISTORY = TypeAdapter(list[HistoryEntry])


def _path(bank_id: str, mental_model_id: str, action: str = "") -> str:
    """A model's path, or the path of one of its actions (``refresh``, ``history``...)."""
    path = child_path(bank_id, "mental-models", mental_model_id)
    return f"{path}/{action}" if action else path


class MentalModelMethods:
    """Every mental-model method."""

    @endpoint
    def create_mental_model(
        self,
        bank_id: str,
        name: str,
        source_query: str,
        *,
        id: str | None = None,
        tags: Sequence[str] | None = None,
        max_tokens: int | None = None,
        trigger: Trigger | None = None,
    ) -> Request[CreateMentalModelResponse]:
        """Create a model; its first refresh is queued (``operation_id``; see ``wait``)."""
        body = model_settings_body(
            id=id, name=name, source_query=source_query, tags=tags, max_tokens=max_tokens, trigger=trigger
        )
        path = f"{bank_path(bank_id)}/mental-models"
        return Request("POST", path, CreateMentalModelResponse.model_validate, json=body)

    @endpoint
    def list_mental_models(
        self,
        bank_id: str,
        *,
        tags: Sequence[str] | None = None,
        tags_match: Literal["any", "all", "exact"] | None = None,
        detail: Detail = "metadata",
        limit: int = 100,
        offset: int = 0,
        exclude_knowledge_pages: bool = False,
    ) -> Request[MentalModelList]:
        """A page of models, newest refresh first, each with ``is_stale``; ``exclude_knowledge_pages`` lists
        standalone models only."""
        params = clean(
            {"tags": listed(tags), "tags_match": tags_match, "detail": detail, "limit": limit, "offset": offset}
        )
        if exclude_knowledge_pages:
            params["exclude_knowledge_pages"] = True
        return Request("GET", f"{bank_path(bank_id)}/mental-models", MentalModelList.model_validate, params=params)

    @endpoint
    def get_mental_model(self, bank_id: str, mental_model_id: str, *, detail: Detail = "full") -> Request[MentalModel]:
        """One model at a detail level (default full)."""
        return Request("GET", _path(bank_id, mental_model_id), MentalModel.model_validate, params={"detail": detail})

    @endpoint
    def update_mental_model(
        self,
        bank_id: str,
        mental_model_id: str,
        *,
        name: str | None = None,
        source_query: str | None = None,
        max_tokens: int | None = None,
        tags: Sequence[str] | None = None,
        trigger: Trigger | None = None,
    ) -> Request[MentalModel]:
        """Change the given fields; ``trigger`` fields are merged over the stored trigger. Queues no refresh."""
        body = model_settings_body(
            name=name, source_query=source_query, max_tokens=max_tokens, tags=tags, trigger=trigger
        )
        return Request("PATCH", _path(bank_id, mental_model_id), MentalModel.model_validate, json=body)

    @endpoint
    def delete_mental_model(self, bank_id: str, mental_model_id: str) -> Request[StatusResponse]:
        """Delete a model and its history."""
        return Request("DELETE", _path(bank_id, mental_model_id), StatusResponse.model_validate)

    @endpoint
    def refresh_mental_model(
        self, bank_id: str, mental_model_id: str, *, mode: Literal["full"] | None = None
    ) -> Request[RefreshResponse]:
        """Queue a refresh (or get the one already queued); ``mode="full"`` forces a full rebuild for that run."""
        body = {"mode": mode} if mode else None
        return Request("POST", _path(bank_id, mental_model_id, "refresh"), RefreshResponse.model_validate, json=body)

    @endpoint
    def dry_run_refresh_mental_model(self, bank_id: str, mental_model_id: str) -> Request[DryRunResult]:
        """What a refresh would do now (outcome, preview, diff); writes nothing."""
        return Request("POST", _path(bank_id, mental_model_id, "dry-run-refresh"), DryRunResult.model_validate)

    @endpoint
    def clear_mental_model(self, bank_id: str, mental_model_id: str) -> Request[MentalModel]:
        """Empty the content (kept in history); the next refresh rebuilds it."""
        return Request("POST", _path(bank_id, mental_model_id, "clear"), MentalModel.model_validate)

    @endpoint
    def revert_mental_model(self, bank_id: str, mental_model_id: str, history_id: int) -> Request[MentalModel]:
        """Restore the content a history entry recorded (the revert is itself recorded)."""
        body = {"history_id": history_id}
        return Request("POST", _path(bank_id, mental_model_id, "revert"), MentalModel.model_validate, json=body)

    @endpoint
    def get_mental_model_history(self, bank_id: str, mental_model_id: str) -> Request[list[HistoryEntry]]:
        """Previous versions and failed refreshes, most recent first."""
        return Request("GET", _path(bank_id, mental_model_id, "history"), _HISTORY.validate_python)
