// A bank: its statistics, its embedding model (and re-embedding), its knowledge-base tree, and its mental models
// (filter by tag, page through them) with the staleness badge, last refresh vs last memory seen, the trigger in
// words, a parked or queued refresh and the last outcome.

import { bankPath, get } from "../api.js";
import { append, badge, field, h, reasonWords, relative, spendLine, staleBadge, stamp, triggerWords, when } from "../dom.js";
import { bankTabs } from "./bank_nav.js";
import { embeddingLine } from "./embedding.js";
import { pageSearch } from "./page_search.js";
import { treePanel } from "./tree.js";

/** How often an open bank or model view asks the API again (ms): staleness and queues change without a reload. */
export const POLL_MS = 3000;

/** Call ``fn`` every POLL_MS while the view is shown (skipped while the tab is hidden or a dialog is open). */
export function poll(ctx, fn) {
  let timer = null;
  const tick = async () => {
    if (!ctx.current()) return;
    if (document.visibilityState !== "hidden" && !document.querySelector("dialog[open]")) {
      try { await fn(); } catch { /* the next tick tries again; the view keeps what it shows */ }
    }
    if (ctx.current()) timer = setTimeout(tick, POLL_MS);
  };
  timer = setTimeout(tick, POLL_MS);
  ctx.onLeave(() => clearTimeout(timer));
}

const PAGE = 20;

/** The newest refresh operation of each model among the bank's latest 100 refreshes: {model id: operation}. */
export async function latestRefreshes(bank) {
  const { operations } = await get(`${bankPath(bank)}/operations`, { type: "refresh_mental_model", limit: 100 });
  const out = {};
  for (const op of operations) if (op.mental_model_id && !out[op.mental_model_id]) out[op.mental_model_id] = op;
  return out;
}

/** What a model's refresh queue says: parked until…, queued, refreshing, or the last outcome. */
export function refreshState(op, model) {
  if (op && op.status === "pending" && op.next_retry_at && new Date(op.next_retry_at) > new Date()) {
    return badge(`Parked until ${stamp(op.next_retry_at)}`, "warn", `next_retry_at ${op.next_retry_at} (${relative(op.next_retry_at)})`);
  }
  if (op && op.status === "pending") return badge("Queued", "info");
  if (op && op.status === "processing") return badge("Refreshing…", "info");
  if (op && op.status === "failed") return badge(`Failed: ${(op.details && op.details.failure_reason) || op.error_message || "error"}`, "bad");
  if (op && op.status === "cancelled") return badge("Last refresh cancelled", "neutral");
  if (op && op.status === "completed") {
    const outcome = (op.details && op.details.outcome) || "completed";
    return badge(outcome.replace(/_/g, " "), outcome === "content_written" ? "ok" : "neutral", outcome);
  }
  if (model && model.last_refresh_failed_at) return badge("Last refresh failed", "bad");
  return h("span.muted", {}, "—");
}

export async function bankView(main, [bank], query, ctx) {
  ctx.setCrumbs([["Banks", "#/"], [bank, null]]);
  const stats = await get(`${bankPath(bank)}/stats`);
  const types = stats.nodes_by_fact_type || {};
  const budget = stats.refresh_budget || {};
  append(main, [
    h("div.page-head", {},
      h("h1", {}, `Bank ${bank}`),
      h("span.spacer"),
      bankTabs(bank, ""),
      h("a.button.primary", { href: `#/b/${encodeURIComponent(bank)}/new` }, "New mental model")),
    h("p.stats", {},
      `${stats.total_nodes} memories (${types.world || 0} world, ${types.experience || 0} experience, ${types.observation || 0} observation) · `,
      `${stats.pending_consolidation} pending consolidation · last write `, when(stats.last_memory_write_at), " · ",
      "operations: ", Object.entries(stats.operations_by_status || {}).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(", ") || "none",
      ""),
    stats.refresh_spend ? h("p.stats", {}, `Refresh spend ${spendLine(stats.refresh_spend, budget.bank_daily_tokens)}`,
      stats.failing_models ? ` · ${stats.failing_models} model${stats.failing_models === 1 ? "" : "s"} failing` : "",
      stats.bank_breaker_open ? [" ", badge("Bank breaker open", "bad", "Automatic refreshes of this bank are stopped until failing models recover")] : "") : null,
  ]);
  const embeddingSlot = h("div");
  const reloadEmbedding = async (done = false) => {
    const line = await embeddingLine(bank, () => reloadEmbedding(true));
    // a re-embedding started here owns the line (a poll leaves it alone) until its operation ends
    if (ctx.current() && (done || !embeddingSlot.querySelector("button:disabled"))) embeddingSlot.replaceChildren(line);
  };
  await reloadEmbedding();
  const grid = h("div.grid");
  main.append(embeddingSlot, grid);
  const treeSlot = h("div");
  const modelsSlot = h("div");
  grid.append(treeSlot, modelsSlot);
  const search = pageSearch(bank); // one search box, moved into each new tree panel so a poll keeps what it shows
  // a poll leaves a panel alone while the reader is in it (typing a filter, on a button); an action reloads always
  const idle = (slot, polled) => ctx.current() && !(polled && slot.contains(document.activeElement) && document.activeElement !== document.body);
  const reloadTree = async (polled = false) => {
    const panel = await treePanel(bank, ctx, () => reloadTree(), search);
    if (idle(treeSlot, polled)) treeSlot.replaceChildren(panel);
  };
  const reloadModels = async (polled = false) => {
    const fresh = h("div");
    await renderModels(fresh, bank, query, ctx);
    if (idle(modelsSlot, polled)) modelsSlot.replaceChildren(...fresh.childNodes);
  };
  await Promise.all([reloadTree(), reloadModels()]);
  poll(ctx, () => Promise.all([reloadTree(true), reloadModels(true), reloadEmbedding()]));
}

async function renderModels(slot, bank, query, ctx) {
  const offset = Number(query.get("offset") || 0);
  const tags = (query.get("tags") || "").split(",").map((t) => t.trim()).filter(Boolean);
  const tagsMatch = query.get("match") || "any";
  const standalone = query.get("standalone") === "1";
  const [page, refreshes] = await Promise.all([
    get(`${bankPath(bank)}/mental-models`, { detail: "content", limit: PAGE, offset, tags, tags_match: tagsMatch, exclude_knowledge_pages: standalone || null }),
    latestRefreshes(bank),
  ]);

  const tagInput = h("input", { type: "text", value: tags.join(", "), placeholder: "user:alice, project:x" });
  const matchSelect = h("select", {}, ["any", "all", "exact"].map((m) => h("option", { value: m, selected: m === tagsMatch }, m)));
  const standaloneBox = h("input", { type: "checkbox", checked: standalone });
  const go = (newOffset) => {
    const q = new URLSearchParams();
    if (tagInput.value.trim()) q.set("tags", tagInput.value.trim());
    if (matchSelect.value !== "any") q.set("match", matchSelect.value);
    if (standaloneBox.checked) q.set("standalone", "1");
    if (newOffset) q.set("offset", String(newOffset));
    ctx.navigate(`#/b/${encodeURIComponent(bank)}${q.toString() ? `?${q}` : ""}`);
  };
  const filters = h("form.filters", { on: { submit: (e) => { e.preventDefault(); go(0); } } },
    field("Filter by tags", tagInput), field("Tags match", matchSelect),
    h("div.field.check", {}, standaloneBox, h("label", { for: (standaloneBox.id = "f-standalone") }, "Standalone models only (no pages)")),
    h("button", { type: "submit" }, "Apply"));

  // four columns that fit a 1366 px screen beside the tree: tags go under the name, the queue under the status
  const rows = page.items.map((m) => h("tr", { dataset: { model: m.id } },
    h("th", { scope: "row" }, h("a", { href: `#/b/${encodeURIComponent(bank)}/m/${encodeURIComponent(m.id)}` }, m.name),
      m.is_knowledge_page ? h("span.muted", {}, " (page)") : null,
      h("div.sub", {}, m.tags.length ? m.tags.map((t) => h("span.tag", {}, t)) : h("span.muted", {}, "no tags"))),
    h("td", {}, staleBadge(m), m.is_stale ? h("div.sub.reason", {}, reasonWords(m.staleness_reason)) : null,
      h("div.sub", {}, refreshState(refreshes[m.id], m))),
    h("td", {}, h("div", {}, "refreshed ", when(m.last_refreshed_at)), h("div.muted", {}, "memory seen ", when(m.last_memory_seen_at))),
    h("td", {}, triggerWords(m.trigger, m)),
  ));
  const last = Math.min(offset + PAGE, page.total);
  append(slot, [h("section.panel", { "aria-labelledby": "mm-title" },
    h("div.panel-head", {}, h("h2#mm-title", {}, "Mental models"), h("span.spacer"), h("span.muted", {}, page.total ? `${offset + 1}–${last} of ${page.total}` : "")),
    filters,
    page.items.length ? h("div.table-wrap", {}, h("table.models-table", {},
      h("caption.sr", {}, "Mental models"),
      h("thead", {}, h("tr", {}, ["Name and tags", "Status / queue", "Last refreshed vs memory seen", "Refreshes"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)))
      : h("p.muted", {}, tags.length ? "No model carries these tags." : "No mental model yet."),
    h("nav.pager", { "aria-label": "Mental model pages" },
      h("button", { type: "button", disabled: offset === 0, on: { click: () => go(Math.max(0, offset - PAGE)) } }, "Previous"),
      h("button", { type: "button", disabled: last >= page.total, on: { click: () => go(offset + PAGE) } }, "Next")),
  )]);
}
