// Banks: every bank with its statistics (memories by fact type, pending consolidation, last write, operations by
// status, and tokens/cost where the server reports them).

import { get } from "../api.js";
import { h, spendText, when } from "../dom.js";

export async function banksView(main, _params, _query, ctx) {
  ctx.setCrumbs([["Banks", null]]);
  const { banks } = await get("/v1/default/banks");
  const stats = await Promise.all(banks.map((b) => get(`/v1/default/banks/${encodeURIComponent(b.bank_id)}/stats`).catch(() => null)));
  main.append(h("h1", {}, "Banks"));
  if (!banks.length) {
    main.append(h("p.muted", {}, "No bank yet. Retain a memory (POST /v1/default/banks/{bank}/memories) to create one."));
    return;
  }
  const rows = banks.map((bank, i) => {
    const s = stats[i] || {};
    const types = s.nodes_by_fact_type || {};
    const ops = s.operations_by_status || {};
    const opsText = Object.entries(ops).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(", ") || "none";
    const spend = s.refresh_spend ? spendText(s.refresh_spend.today) : null;
    return h("tr", {},
      h("th", { scope: "row" }, h("a", { href: `#/b/${encodeURIComponent(bank.bank_id)}` }, bank.name && bank.name !== bank.bank_id ? `${bank.name} (${bank.bank_id})` : bank.bank_id)),
      h("td.num", {}, String(s.total_nodes ?? bank.fact_count)),
      h("td", {}, `${types.world || 0} world · ${types.experience || 0} experience · ${types.observation || 0} observation`),
      h("td.num", {}, String(s.pending_consolidation ?? "—")),
      h("td", {}, when(s.last_memory_write_at || bank.last_write_at)),
      h("td", {}, h("a", { href: `#/b/${encodeURIComponent(bank.bank_id)}/ops` }, opsText)),
      h("td", {}, spend || h("span.muted", {}, "—")),
    );
  });
  main.append(h("div.table-wrap", {}, h("table", {},
    h("caption.sr", {}, "Banks and their statistics"),
    h("thead", {}, h("tr", {}, ["Bank", "Memories", "By fact type", "Pending consolidation", "Last write", "Operations", "Refresh spend today"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows),
  )));
}
