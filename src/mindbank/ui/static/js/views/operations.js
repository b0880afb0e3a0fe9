// Operations of a bank: pending, parked (pending with a next_retry_at still ahead), processing, failed with reasons,
// completed and cancelled; a pending one can be cancelled.

import { bankPath, del, get } from "../api.js";
import { append, badge, h, relative, stamp, when } from "../dom.js";

const FILTERS = [
  ["all", "All"], ["pending", "Pending"], ["parked", "Parked"], ["processing", "Processing"],
  ["failed", "Failed"], ["completed", "Completed"], ["cancelled", "Cancelled"],
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
  const offset = Number(query.get("offset") || 0);
  const status = filter === "all" ? null : filter === "parked" ? "pending" : filter;
  const [page, models] = await Promise.all([
    get(`${bankPath(bank)}/operations`, { status, limit: filter === "parked" ? 100 : PAGE, offset: filter === "parked" ? 0 : offset }),
    get(`${bankPath(bank)}/mental-models`, { limit: 1000 }),
  ]);
  const names = Object.fromEntries(models.items.map((m) => [m.id, m.name]));
  const ops = filter === "parked" ? page.operations.filter(parked) : page.operations;
  const notice = h("p.status", { role: "status", "aria-live": "polite" }, flash || "");
  flash = null;
  const href = (s, o = 0) => `${bankHref}/ops?status=${s}${o ? `&offset=${o}` : ""}`;

  const rows = ops.map((op) => h("tr", { dataset: { operation: op.id } },
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
  ));

  append(main, [
    h("div.page-head", {}, h("h1", {}, "Operations"), h("span.spacer"), h("button", { type: "button", on: { click: () => ctx.rerender() } }, "Reload")),
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
