"""Client methods over observations and bulk memory deletes, named as the reference's operations:
``get_observation_history``, ``clear_memory_observations``, ``clear_bank_memories``, ``clear_observations`` and
``list_observation_scopes``."""

from __future__ import annotations

from typing import Literal

from pydantic import TypeAdapter

from mindbank.client._wire import Request, bank_path, child_path, clean, endpoint
from mindbank.client.resource_models import (
    ClearMemoryObservationsResponse,
    DeleteResponse,
    DerivedObservations,
    ObservationChange,
    ObservationScopes,
)

_CHANGES = TypeAdapter(list[ObservationChange])


class ObservationMethods:
    """Every observation method."""

    @endpoint
    def get_observation_history(self, bank_id: str, memory_id: str) -> Request[list[ObservationChange]]:
        """The changes consolidation made to an observation, newest first, each with its text and source facts
        before and after (``[]`` for a fact, or an observation never changed)."""
        path = f"{child_path(bank_id, 'memories', memory_id)}/history"
        return Request("GET", path, _CHANGES.validate_python)

    @endpoint
    def list_memory_observations(self, bank_id: str, memory_id: str) -> Request[DerivedObservations]:
        """The observations built from ``memory_id`` (those listing it among their sources), oldest first."""
        path = f"{child_path(bank_id, 'memories', memory_id)}/observations"
        return Request("GET", path, DerivedObservations.model_validate)

    @endpoint
    def clear_memory_observations(self, bank_id: str, memory_id: str) -> Request[ClearMemoryObservationsResponse]:
        """Delete the observations built from ``memory_id`` and send it back to consolidation (the memory stays);
        models citing a deleted observation go stale."""
        path = f"{child_path(bank_id, 'memories', memory_id)}/observations"
        return Request("DELETE", path, ClearMemoryObservationsResponse.model_validate)

    @endpoint
    def clear_bank_memories(
        self, bank_id: str, *, type: Literal["world", "experience", "observation"] | None = None
    ) -> Request[DeleteResponse]:
        """Delete the bank's memories of ``type``, or every memory with the documents they came from; the bank, its
        configuration and its mental models stay (models citing what went go stale)."""
        params = clean({"type": type})
        return Request("DELETE", f"{bank_path(bank_id)}/memories", DeleteResponse.model_validate, params=params)

    @endpoint
    def clear_observations(self, bank_id: str) -> Request[DeleteResponse]:
        """Delete every observation of the bank; its facts go back to consolidation, which rebuilds them."""
        return Request("DELETE", f"{bank_path(bank_id)}/observations", DeleteResponse.model_validate)

    @endpoint
    def list_observation_scopes(self, bank_id: str, *, limit: int = 100, offset: int = 0) -> Request[ObservationScopes]:
        """The distinct tag sets the bank's observations live under, with their counts, most populous first."""
        path = f"{bank_path(bank_id)}/observations/scopes"
        return Request("GET", path, ObservationScopes.model_validate, params={"limit": limit, "offset": offset})
