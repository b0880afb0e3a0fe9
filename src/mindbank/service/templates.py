"""Bank templates: export a bank's setup (profile, config overrides, mental-model definitions, directives) as the
reference's ``BankTemplateManifest``, and apply one to a bank (``GET /export``, ``POST /import``); the format is
:mod:`mindbank.domain.transfer.template`.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from mindbank.domain.transfer.template import TEMPLATE_OVERRIDES, TEMPLATE_VERSION, BankTemplate, TemplateBank
from mindbank.errors import InvalidInputError, NotFoundError
from mindbank.service.core import ServiceCore, ServiceState
from mindbank.service.directives import DirectivesService
from mindbank.service.mental_models import MentalModelsService
from mindbank.service.transfer_directives import apply_directives, bank_directives


class TemplatesService(ServiceCore):
    """Bank templates, applied through the checks of ``mental_models`` and ``directives``."""

    def __init__(
        self, state: ServiceState, *, mental_models: MentalModelsService, directives: DirectivesService
    ) -> None:
        super().__init__(state)
        self.mental_models = mental_models
        self.directives = directives

    def export_bank_template(self, bank_id: str) -> dict[str, Any]:
        """The bank's setup as a template manifest (``version`` "1"); only what is set is written. Raises
        :class:`NotFoundError`."""
        bank = self.store.get_bank(bank_id)
        if bank is None:
            raise NotFoundError(f"Bank '{bank_id}' not found")
        section: dict[str, Any] = {}
        if bank.mission:
            section["reflect_mission"] = bank.mission
        for trait, value in (bank.disposition or {}).items():
            section[f"disposition_{trait}"] = value
        section |= {k: v for k, v in bank.config.items() if k in TEMPLATE_OVERRIDES}
        models, _ = self.store.list_mental_models(bank_id, tags=(), tags_match="any", limit=1_000_000, offset=0)
        return {
            "version": TEMPLATE_VERSION,
            "bank": section,
            "mental_models": [
                {
                    "id": m.id,
                    "name": m.name,
                    "source_query": m.source_query,
                    "tags": list(m.tags),
                    "max_tokens": m.max_tokens,
                    "trigger": {k: v for k, v in m.trigger.items() if v is not None},
                }
                for m in sorted(models, key=lambda m: m.id)
            ],
            "directives": bank_directives(self.directives, bank_id),
        }

    def import_bank_template(self, bank_id: str, manifest: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        """Apply a template to the bank (created if missing): ``bank`` fields become the profile and overrides,
        mental models are matched by id (updated, or created with their first refresh queued), directives by name.
        Everything is checked before anything is written; ``dry_run`` stops there. Returns the reference's
        ``BankTemplateImportResponse`` plus ``config_ignored`` (reference settings mindbank has no use for).
        Raises :class:`InvalidInputError` naming the field."""
        template = _validated(manifest)
        ignored = _ignored(template.bank)
        directives = template.directives or []
        existing = {m.id for m in template.mental_models or () if self.store.get_mental_model(bank_id, m.id)}
        created = [m.id for m in template.mental_models or () if m.id not in existing]
        created_d, updated_d = apply_directives(self.directives, bank_id, directives, dry_run=True)
        response: dict[str, Any] = {
            "bank_id": bank_id,
            "config_applied": False,
            "mental_models_created": created,
            "mental_models_updated": sorted(existing),
            "directives_created": created_d,
            "directives_updated": updated_d,
            "operation_ids": [],
            "dry_run": dry_run,
            "config_ignored": ignored,
        }
        if dry_run:
            return response
        if template.bank is not None:
            current = self.store.get_bank(bank_id)
            self.store.upsert_bank(
                bank_id,
                name=None,
                mission=template.bank.reflect_mission,
                disposition=template.bank.disposition(current.disposition if current else None),
            )
            overrides = template.bank.overrides()
            if overrides:
                self.store.update_bank_config(bank_id, overrides)
            response["config_applied"] = True
        for m in template.mental_models or ():
            if m.id in existing:
                self.mental_models.update_mental_model(
                    bank_id, m.id, name=m.name, source_query=m.source_query, max_tokens=m.max_tokens, tags=m.tags,
                    trigger=m.trigger,
                )  # fmt: skip
            else:
                _, op_id = self.mental_models.create_mental_model(
                    bank_id, id=m.id, name=m.name, source_query=m.source_query, tags=m.tags, max_tokens=m.max_tokens,
                    trigger=m.trigger,
                )  # fmt: skip
                response["operation_ids"].append(op_id)
        apply_directives(self.directives, bank_id, directives, dry_run=False)
        return response

    @staticmethod
    def bank_template_schema() -> dict[str, Any]:
        """The JSON Schema of a template manifest."""
        return BankTemplate.model_json_schema()


def _validated(manifest: dict[str, Any]) -> BankTemplate:
    try:
        return BankTemplate.model_validate(manifest)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "manifest"
        raise InvalidInputError(field, str(err["msg"]).removeprefix("Value error, ")) from exc


def _ignored(bank: TemplateBank | None) -> list[str]:
    if bank is None:
        return []
    try:
        return bank.ignored()
    except ValueError as exc:
        raise InvalidInputError("bank", str(exc)) from exc
