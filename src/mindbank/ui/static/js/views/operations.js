// Operations of a bank: pending, parked (pending with a next_retry_at still ahead), processing, failed with reasons,
// completed and cancelled, filtered by type too; a pending one can be cancelled. Consecutive consolidations (an
// import queues one per batch) fold into one row that opens on demand.

import { bankPath, del, get } from "../api.js";
import { append, badge, field, h, relative, stamp, when } from "../dom.js";
import { bankTabs } from "./bank_nav.js";

const FILTERS = [
  ["all", "All"], ["pending", "Pending"], ["parked", "Parked"], ["processing", "Processing"],
  ["failed", "Failed"], ["completed", "Completed"], ["cancelled", "Cancelled"],
];
const TYPES = [
  "batch_retain", "consolidation", "refresh_mental_model", "reprocess_document", "webhook_delivery",
  "bank_transfer_export", "bank_transfer_import", "document_export", "document_import",
];
const PAGE = 50;
let flash = null; // the outcome of the last action, shown once after the list reloads

function parked(op) {
  return op.status === "pending" && op.next_retry_at && new Date(op.next_retry_at) > new Date();
}

function statusBadge(op) {
  if (parked(op)) return badge(`parked until ${stamp(op.next_retry_at)}`, "warn", relative(op.next_retry_at));
  const kind = { pending: "info", processing: "info", completed: "ok", failed: "bad", cancelled: "neutral" }[op.status] || "neutral";
  return badge(op.status, kind);
}

export async function operationsView(main, [bank], query, ctx) {
  const bankHref = `#/b/${encodeURIComponent(bank)}`;
  ctx.setCrumbs([["Banks", "#/"], [bank, bankHref], ["Operations", null]]);
  const filter = query.get("status") || "all";
  const type = query.get("type") || "";
  const offset = Number(query.get("offset") || 0);
  const status = filter === "all" ? null : filter === "parked" ? "pending" : filter;
  const [page, models] = await Promise.all([
    get(`${bankPath(bank)}/operations`, { status, type: type || null, limit: filter === "parked" ? 100 : PAGE, offset: filter === "parked" ? 0 : offset }),
    get(`${bankPath(bank)}/mental-models`, { limit: 1000 }),
  ]);
  const names = Object.fromEntries(models.items.map((m) => [m.id, m.name]));
  const ops = filter === "parked" ? page.operations.filter(parked) : page.operations;
  const notice = h("p.status", { role: "status", "aria-live": "polite" }, flash || "");
  flash = null;
  const href = (s, o = 0, t = type) => `${bankHref}/ops?status=${s}${t ? `&type=${encodeURIComponent(t)}` : ""}${o ? `&offset=${o}` : ""}`;
  const typeSelect = h("select", { on: { change: () => ctx.navigate(href(filter, 0, typeSelect.value)) } },
    h("option", { value: "" }, "all types"), [...new Set([...TYPES, type].filter(Boolean))].map((t) => h("option", { value: t, selected: t === type }, t.replace(/_/g, " "))));

  const row = (op) => h("tr", { dataset: { operation: op.id } },
    h("td", {}, op.operation_type),
    h("td", {}, !op.mental_model_id ? h("span.muted", {}, "—")
      : names[op.mental_model_id] ? h("a", { href: `${bankHref}/m/${encodeURIComponent(op.mental_model_id)}`, title: op.mental_model_id }, names[op.mental_model_id])
        : h("span.muted", { title: op.mental_model_id }, "(deleted model)")),
    h("td", {}, statusBadge(op)),
    h("td", {}, when(op.created_at)),
    h("td", {}, when(op.updated_at)),
    h("td.num", {}, String(op.retry_count)),
    h("td", {}, [op.details && op.details.outcome ? op.details.outcome : null, op.details && op.details.failure_reason ? `reason: ${op.details.failure_reason}` : null, op.error_message]
      .filter(Boolean).join(" — ") || h("span.muted", {}, "—")),
    h("td", {}, op.status === "pending" ? h("button.small.danger", { type: "button", "aria-label": `Cancel operation ${op.id}`, on: { click: async (e) => {
      e.target.disabled = true;
      try {
        await del(`${bankPath(bank)}/operations/${encodeURIComponent(op.id)}`);
        flash = `Operation ${op.id} cancelled.`;
        ctx.rerender();
      } catch (err) { notice.textContent = `Could not cancel: ${err.message}`; e.target.disabled = false; }
    } } }, "Cancel") : null),
  );
  const rows = groupConsolidations(ops, row);

  append(main, [
    h("div.page-head", {}, h("h1", {}, "Operations"), h("span.spacer"), bankTabs(bank, "ops"), h("button", { type: "button", on: { click: () => ctx.rerender() } }, "Reload")),
    h("div.filters", {}, field("Type", typeSelect)),
    h("nav.tabs", { "aria-label": "Filter operations by status" },
      FILTERS.map(([key, label]) => h("a", { href: href(key), "aria-current": key === filter ? "page" : null }, label))),
    notice,
    ops.length ? h("div.table-wrap", {}, h("table", {},
      h("caption.sr", {}, "Operations, newest first"),
      h("thead", {}, h("tr", {}, ["Type", "Mental model", "Status", "Created", "Updated", "Retries", "Outcome / reason", ""].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)))
      : h("p.muted", {}, "No operation here."),
    filter === "parked" ? null : h("nav.pager", { "aria-label": "Operation pages" },
      h("a.button", { href: href(filter, Math.max(0, offset - PAGE)), "aria-disabled": offset === 0 ? "true" : null }, "Previous"),
      h("span.muted", {}, page.total ? ` ${offset + 1}–${Math.min(offset + PAGE, page.total)} of ${page.total} ` : ""),
      h("a.button", { href: href(filter, offset + PAGE), "aria-disabled": offset + PAGE >= page.total ? "true" : null }, "Next")),
  ]);
  // keep the list current while work is in flight
  if (page.operations.some((op) => op.status === "processing" || (op.status === "pending" && !parked(op)))) {
    const timer = setTimeout(() => ctx.current() && ctx.rerender(), 2000);
    ctx.onLeave(() => clearTimeout(timer));
  }
}

/** Table rows for ``ops``, runs of two or more consecutive consolidations folded into one summary row (their
 * statuses counted) whose button shows or hides them. */
function groupConsolidations(ops, row) {
  const out = [];
  for (let i = 0; i < ops.length;) {
    let j = i;
    while (j < ops.length && ops[j].operation_type === "consolidation") j++;
    if (j - i < 2) { out.push(row(ops[i])); i = Math.max(i + 1, j); continue; }
    const run = ops.slice(i, j);
    const members = run.map((op) => { const tr = row(op); tr.hidden = true; tr.classList.add("grouped"); return tr; });
    const counts = {};
    for (const op of run) counts[op.status] = (counts[op.status] || 0) + 1;
    const toggle = h("button.small", { type: "button", "aria-expanded": "false", on: { click: () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      toggle.textContent = open ? "Hide" : "Show";
      for (const tr of members) tr.hidden = !open;
    } } }, "Show");
    out.push(h("tr.group", {},
      h("td", {}, `consolidation ×${run.length}`),
      h("td", {}, h("span.muted", {}, "—")),
      h("td", {}, Object.entries(counts).map(([k, n]) => badge(`${n} ${k}`, k === "failed" ? "bad" : k === "completed" ? "ok" : "info"))),
      h("td", {}, when(run.at(-1).created_at)), h("td", {}, when(run[0].updated_at)), h("td"),
      h("td", {}, "consolidations queued together (an import or a batch of retains)"),
      h("td", {}, toggle)), members);
    i = j;
  }
  return out;
}
