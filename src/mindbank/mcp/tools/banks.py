"""Bank tools: list banks, bank statistics, tags in use."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mindbank.domain import fields
from mindbank.mcp.caller import current_principal
from mindbank.mcp.tools.common import BankId, Offset, ToolFamily
from mindbank.wire.shapes import bank_list_item, bank_stats_response, tag_page


class BankTools(ToolFamily):
    """Bank tools: list banks, bank statistics, tags in use."""

    TOOLS = ("list_banks", "list_tags", "get_bank_stats")
    READS = frozenset(TOOLS)

    def list_banks(self) -> dict[str, Any]:
        """List every memory bank with its memory count (with a scoped API key: the banks it may use).

        Returns {banks: [{bank_id, name, mission, fact_count, created_at, last_write_at, ...}], total}.
        """
        caller = current_principal()
        banks = [(b, n) for b, n in self.mb.list_banks() if caller is None or caller.covers(b.bank_id)]
        return {"banks": [bank_list_item(b, n) for b, n in banks], "total": len(banks)}

    def list_tags(
        self,
        q: Annotated[
            fields.QueryParamText | None, Field(description="Filter, case-insensitive, '*' wildcards.")
        ] = None,
        source: Annotated[
            Literal["memories", "mental_models"], Field(description="Count tags of memories or of mental models.")
        ] = "memories",
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
        offset: Offset = 0,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """List the tags in use in the bank with their counts, most used first.

        Returns {items: [{tag, count}], total, limit, offset}.
        """
        items, total = self.mb.list_tags(bank_id, source=source, pattern=q, limit=limit, offset=offset)
        return tag_page(items, total, limit, offset)

    def get_bank_stats(self, *, bank_id: BankId) -> dict[str, Any]:
        """Statistics of the bank: memory counts by fact type, documents, operations by status, last write.

        Returns the HTTP /stats shape {bank_id, total_nodes, nodes_by_fact_type, operations_by_status, ...}.
        """
        return bank_stats_response(bank_id, self.mb.bank_stats(bank_id))
