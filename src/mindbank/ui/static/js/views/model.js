// One mental model: its rendered content (click a block to see the memories it cites), its history with a diff
// between any two versions and Revert, the last trace, a dry run (diff, window, facts, warnings; nothing written),
// Refresh and Clear with the operation followed until done, Edit and Delete.

import { bankPath, del, follow, get, post } from "../api.js";
import { append, badge, clear, dryRunVerdict, h, modal, reasonWords, spendFields, spendLine, staleBadge, stamp, triggerWords, when } from "../dom.js";
import { renderUnified } from "../diff.js";
import { renderBlock, splitBlocks } from "../markdown.js";
import { latestRefreshes, poll, refreshState } from "./bank.js";
import { curationSlot } from "./curation.js";
import { historySection } from "./history.js";

let flash = null; // a message to show after the next render (the outcome of an action that re-rendered the view)

const OP_WORDS = { pending: "queued", processing: "running", completed: "done", failed: "failed", cancelled: "cancelled" };

function opLine(label, op) {
  const outcome = op.details && op.details.outcome ? ` (${op.details.outcome})` : "";
  const parked = op.status === "pending" && op.next_retry_at ? `, parked until ${stamp(op.next_retry_at)}` : "";
  const error = op.error_message ? `: ${op.error_message}` : "";
  return `${label}: ${OP_WORDS[op.status] || op.status}${parked}${outcome}${error}`;
}

/** What the refresh governance says about the model (API ``refresh_status``): failures, the breaker, the backoff,
 * facts carried over, a refusal; null when all is well. */
function refreshHealth(status) {
  if (!status) return null;
  const lines = [];
  if (status.breaker_open) {
    lines.push(badge("Breaker open", "bad", "Automatic refreshes stopped: a manual refresh that succeeds (or Clear) resets it"));
  }
  if (status.consecutive_failures) {
    lines.push(`${status.consecutive_failures} failed refresh${status.consecutive_failures === 1 ? "" : "es"} in a row`
      + (status.last_failure_reason ? ` (last: ${status.last_failure_reason.replace(/_/g, " ")})` : ""));
  }
  if (status.next_automatic_refresh_at) lines.push(h("span", {}, "next automatic attempt after ", when(status.next_automatic_refresh_at)));
  if (status.waiting_for_scope_change) lines.push("scope empty: waits for a memory in scope");
  if (status.carried_over && status.carried_over.length) {
    lines.push(`${status.carried_over.length} new fact${status.carried_over.length === 1 ? "" : "s"} carried over to the next refresh`);
  }
  if (status.last_refusal && status.last_refusal.reason) lines.push(`last automatic refresh refused: ${status.last_refusal.reason.replace(/_/g, " ")}`);
  if (!lines.length) return null;
  return [h("dt", {}, "Refresh health"), h("dd", {}, lines.flatMap((line, i) => (i ? [" · ", line] : [line])))];
}

export async function modelView(main, [bank, id], query, ctx) {
  const base = `${bankPath(bank)}/mental-models/${encodeURIComponent(id)}`;
  const bankHref = `#/b/${encodeURIComponent(bank)}`;
  const selfHref = `${bankHref}/m/${encodeURIComponent(id)}`;
  const [model, history, refreshes] = await Promise.all([get(base), get(`${base}/history`), latestRefreshes(bank)]);
  ctx.setCrumbs([["Banks", "#/"], [bank, bankHref], [model.name, null]]);
  const response = model.reflect_response || {};
  const status = h("p.status", { role: "status", "aria-live": "polite" }, flash || "");
  flash = null;
  const busy = (on) => main.querySelectorAll(".actions button").forEach((b) => { b.disabled = on; });

  const runOperation = async (label, operationId) => {
    busy(true);
    // the final state is said by the re-rendered page (its flash), next to what the operation changed
    const op = await follow(bank, operationId, (o) => { if (o.status === "pending" || o.status === "processing") status.textContent = opLine(label, o); });
    flash = opLine(label, op);
    ctx.navigate(selfHref);
  };

  const dryRunSlot = h("div");
  const actions = h("div.actions", {},
    h("button.primary", { type: "button", on: { click: async () => {
      try {
        status.textContent = "Refresh: queuing…";
        const queued = await post(`${base}/refresh`);
        await runOperation("Refresh", queued.operation_id);
      } catch (err) { status.textContent = `Refresh failed: ${err.message}`; busy(false); }
    } } }, "Refresh"),
    h("button", { type: "button", on: { click: async () => {
      busy(true);
      status.textContent = "Dry run: running the refresh pipeline without writing…";
      try {
        dryRunSlot.replaceChildren(dryRunPanel(await post(`${base}/dry-run-refresh`), () => dryRunSlot.replaceChildren()));
        status.textContent = "Dry run finished: nothing was written.";
        dryRunSlot.querySelector("h2").focus();
      } catch (err) { status.textContent = `Dry run failed: ${err.message}`; }
      busy(false);
    } } }, "Dry run"),
    h("a.button", { href: `${selfHref}/edit` }, "Edit"),
    h("button", { type: "button", on: { click: async () => {
      const done = await modal(`Clear “${model.name}”?`, h("p", {}, "The content is emptied now; the current version is kept in history and the next refresh rebuilds the document in full."),
        { submit: "Clear content", danger: true, onSubmit: () => post(`${base}/clear`) });
      if (done) { flash = "Clear: done (the previous content is in history)."; ctx.navigate(selfHref); }
    } } }, "Clear"),
    h("button.danger", { type: "button", on: { click: async () => {
      const done = await modal(`Delete “${model.name}”?`, h("p", {}, model.is_knowledge_page
        ? "This mental model is a knowledge page: the page goes with it, and so does its history."
        : "The model and its history are deleted. This cannot be undone."),
      { submit: "Delete", danger: true, onSubmit: () => del(base) });
      if (done) ctx.navigate(bankHref);
    } } }, "Delete"),
  );

  const op = refreshes[model.id];
  const spend = [...spendFields(model), ...spendFields(response.usage ? { usage: response.usage } : {})];
  const facts = h("dl.facts", {},
    h("dt", {}, "Question"), h("dd", {}, model.source_query),
    h("dt", {}, "Tags"), h("dd", {}, model.tags.length ? model.tags.map((t) => h("span.tag", {}, t)) : "none (reads the whole bank)"),
    h("dt", {}, "Last refreshed"), h("dd", {}, when(model.last_refreshed_at)),
    h("dt", {}, "Last memory seen"), h("dd", {}, when(model.last_memory_seen_at)),
    h("dt", {}, "Refreshes"), h("dd", {}, triggerWords(model.trigger, model), ` · ${model.trigger.mode} mode · up to ${model.max_tokens} tokens`),
    h("dt", {}, "Queue / last outcome"), h("dd", {}, op || !response.outcome ? refreshState(op, model) : badge(response.outcome, "neutral")),
    model.last_refresh_failed_at ? [h("dt", {}, "Last failure"), h("dd", {}, when(model.last_refresh_failed_at))] : null,
    refreshHealth(model.refresh_status),
    model.refresh_status ? [h("dt", {}, "Refresh spend"), h("dd", {}, spendLine(model.refresh_status.spend, model.refresh_status.daily_token_budget))] : null,
    spend.length ? [h("dt", {}, "Last answer's tokens"), h("dd", {}, spend.map(([k, v]) => `${k} ${v}`).join(" · "))] : null,
  );

  const curation = curationSlot(base, model, (message) => { flash = message; ctx.navigate(selfHref); });
  append(main, [
    h("div.page-head", {},
      h("h1", {}, model.name), staleBadge(model), staleReason(model),
      model.is_knowledge_page ? badge("Knowledge page", "info") : null,
      model.content ? null : badge("Empty", "neutral", "Not refreshed yet, or cleared")),
    facts, actions, status, dryRunSlot,
    curation.notes,
    contentSection(bank, model),
    curation.panel,
    historySection(bank, model, history, async (entry, version) => {
      busy(true);
      try {
        await post(`${base}/revert`, { history_id: entry.id });
        flash = `Reverted to version ${version}.`;
        ctx.navigate(selfHref);
      } catch (err) { status.textContent = `Revert failed: ${err.message}`; busy(false); }
    }),
    traceSection(response.trace),
  ]);

  const pending = query.get("op");
  if (pending) {
    window.history.replaceState(null, "", selfHref);
    runOperation("First refresh", pending).catch((err) => { status.textContent = err.message; });
  }
  // staleness and refreshes change while the page is open: the badge and its reason follow; new content (a
  // refresh that ran elsewhere) re-renders the page unless an action of this page is under way
  poll(ctx, async () => {
    const now = await get(base, { detail: "content" });
    main.querySelector(".page-head .badge")?.replaceWith(staleBadge(now));
    main.querySelector(".page-head .stale-reason")?.replaceWith(staleReason(now));
    const idle = ![...main.querySelectorAll(".actions button")].some((b) => b.disabled);
    if (idle && (now.last_refreshed_at !== model.last_refreshed_at || now.content !== model.content)) ctx.rerender();
  });
}

/** Why the model is stale, next to its badge (an empty span when fresh, so a poll can replace it). */
function staleReason(model) {
  return h("span.stale-reason", {}, model.is_stale ? reasonWords(model.staleness_reason) : "");
}

function dryRunPanel(r, close) {
  const counts = (obj) => Object.entries(obj || {}).map(([k, n]) => `${n} ${k}`).join(", ") || "none";
  return h("section.panel.dry-run", { "aria-labelledby": "dry-title" },
    h("div.panel-head", {}, h("h2#dry-title", { tabindex: -1 }, "Dry run — nothing was written"), h("span.spacer"),
      h("button", { type: "button", on: { click: close } }, "Close")),
    h("dl.facts", {},
      h("dt", {}, "Outcome"), h("dd", {}, dryRunVerdict(r), " ", h("span.muted", { title: "outcome, as the API reports it" }, `(${r.outcome})`)),
      h("dt", {}, "Mode"), h("dd", {}, `${r.requested_mode} → ${r.effective_mode}`, r.mode_fallback_reason ? ` (${r.mode_fallback_reason})` : ""),
      h("dt", {}, "Window"), h("dd", {}, r.window && r.window.created_after ? ["memories written after ", when(r.window.created_after), " and up to "] : "every memory up to ",
        when(r.window && r.window.created_before), r.window && r.window.watermark ? [" · new watermark ", when(r.window.watermark)] : null),
      h("dt", {}, "Facts"), h("dd", {}, `retrieved ${counts(r.facts && r.facts.retrieved)}; used ${counts(r.facts && r.facts.used)}`),
      h("dt", {}, "Warnings"), h("dd", {}, r.warnings && r.warnings.length ? h("ul.warnings", {}, r.warnings.map((w) => h("li", {}, w))) : "none"),
    ),
    h("h3", {}, "Diff (current → preview)"),
    renderUnified(r.diff, "Dry-run diff"));
}

function contentSection(bank, model) {
  const numbers = new Map();
  const blocks = splitBlocks(model.content);
  for (const block of blocks) for (const mid of block.citations) if (!numbers.has(mid)) numbers.set(mid, numbers.size + 1);
  const panel = h("aside.provenance", { "aria-live": "polite", "aria-labelledby": "prov-title" },
    h("h3#prov-title", {}, "Provenance"), h("p.muted", {}, "Select a block to see the memories it cites."));
  let selected = null;

  const show = async (el, block) => {
    if (selected) selected.setAttribute("aria-pressed", "false");
    selected = el;
    el.setAttribute("aria-pressed", "true");
    clear(panel).append(h("h3#prov-title", {}, "Provenance"));
    if (!block.citations.length) {
      panel.append(h("p.muted", {}, "This block cites no memory (a heading or the document's preamble)."));
      return;
    }
    panel.append(h("p", {}, `This block cites ${block.citations.length} memor${block.citations.length === 1 ? "y" : "ies"}:`));
    const list = h("ol.memories");
    panel.append(list);
    const memories = await Promise.all(block.citations.map((mid) =>
      get(`${bankPath(bank)}/memories/${encodeURIComponent(mid)}`).catch((err) => ({ id: mid, missing: err.status === 404 }))));
    for (const m of memories) {
      list.append(m.missing || !m.text
        ? h("li.memory.gone", { value: numbers.get(m.id) }, `Memory ${m.id} no longer exists (deleted since this version was written).`)
        : h("li.memory", { value: numbers.get(m.id) },
          h("p.text", {}, m.text),
          h("p.meta", {}, badge(m.fact_type || m.type, "neutral"), " ", m.tags.map((t) => h("span.tag", {}, t)), " ",
            when(m.occurred_start || m.mentioned_at || m.created_at), h("span.muted.id", {}, ` ${m.id}`))));
    }
  };

  const doc = h("article.doc", { "aria-label": "Document" },
    blocks.length ? blocks.map((block, i) => {
      const el = h("div.block", {
        tabindex: 0, role: "button", "aria-pressed": "false",
        "aria-label": `Block ${i + 1}${block.citations.length ? `, cites ${block.citations.length}` : ""}: show its memories`,
        dataset: { citations: block.citations.join(" ") },
      }, renderBlock(block.text, (mid) => numbers.get(mid)));
      el.addEventListener("click", () => show(el, block));
      el.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); show(el, block); } });
      return el;
    }) : h("p.muted", {}, "No content yet: the model has not been refreshed, or it was cleared."));
  return h("section", { "aria-labelledby": "content-title" }, h("h2#content-title", {}, "Content"), h("div.doc-grid", {}, doc, panel));
}

function traceSection(trace) {
  const section = h("section", { "aria-labelledby": "trace-title" }, h("h2#trace-title", {}, "Last trace"));
  if (!trace) {
    section.append(h("p.muted", {}, "No trace kept. Turn on “Keep trace” in the model's settings to record how each refresh ran."));
    return section;
  }
  const calls = trace.tool_calls || [];
  append(section, [
    h("dl.facts", {},
      h("dt", {}, "Recorded"), h("dd", {}, when(trace.recorded_at)),
      h("dt", {}, "Mode"), h("dd", {}, `${trace.effective_mode || "—"}${trace.mode_fallback_reason ? ` (${trace.mode_fallback_reason})` : ""}`),
      h("dt", {}, "Outcome"), h("dd", {}, trace.outcome || "—"),
      h("dt", {}, "Tool calls"), h("dd", {}, calls.length ? calls.map((c) => `${c.tool}${c.result_count !== undefined ? ` → ${c.result_count}` : ""}`).join(", ") : "none"),
      h("dt", {}, "Duration"), h("dd", {}, trace.duration_ms !== undefined ? `${Math.round(trace.duration_ms)} ms` : "—"),
      trace.warnings && trace.warnings.length ? [h("dt", {}, "Warnings"), h("dd", {}, h("ul.warnings", {}, trace.warnings.map((w) => h("li", {}, w))))] : null),
    h("details", {}, h("summary", {}, "Raw trace (JSON)"), h("pre.json", {}, JSON.stringify(trace, null, 2)))]);
  return section;
}
