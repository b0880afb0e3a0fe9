// A model's history as versions a reader can follow: numbered per model (the API's `version`; the empty state a
// model starts from is not a version), failed refreshes between them, a diff between any two versions aligned by
// block with citations shown as numbered references (hover: the memory's id; the memories cited by changed blocks
// listed under the diff, their text the reference's tooltip), and Revert with what the next refresh will do to the restored version.

import { bankPath, get } from "../api.js";
import { h, modal, triggerWords, when } from "../dom.js";
import { diffItems } from "../diff.js";
import { inline, splitBlocks } from "../markdown.js";

/** The versions of a model, oldest first: [{key, version, label, text, entry}] — history rows, then the current
 * content. Rows without a version (failures) and the empty initial state are left out. */
export function versionsOf(model, history) {
  const rows = history.filter((e) => e.version !== null && e.version !== undefined && !(e.version === 0 && !e.previous_content));
  const out = rows.slice().reverse().map((e) => ({
    key: String(e.id), version: e.version, text: e.previous_content || "", entry: e,
    label: `Version ${e.version}${e.previous_content ? "" : " (empty)"}`,
  }));
  const newest = history.find((e) => e.version !== null && e.version !== undefined);
  const current = newest ? newest.version + 1 : (model.content ? 1 : 0);
  if (current > 0) out.push({ key: "current", version: current, text: model.content || "", entry: null, label: `Version ${current} (current)` });
  return out;
}

/** What a revert leads to, in words, for the confirmation. */
function revertNote(model, target, current) {
  const trigger = model.trigger || {};
  const automatic = trigger.refresh_after_consolidation || trigger.refresh_cron;
  const seen = target.entry && target.entry.previous_last_memory_seen_at;
  const next = !automatic
    ? "It refreshes only when asked (manual): the restored text stays until someone presses Refresh."
    : trigger.mode === "full"
      ? `It refreshes ${triggerWords(trigger, model)}: the next automatic refresh rebuilds the document in full, replacing the restored text.`
      : `It refreshes ${triggerWords(trigger, model)}: the next automatic refresh is a delta that merges the memories written since into the restored text.`;
  return [
    h("p", {}, `Version ${target.version} becomes the current content as version ${current.version + 1}; version ${current.version} stays in history.`),
    h("p", {}, seen ? ["The restored text stands for the memories up to ", when(seen), ": memories written since make the model stale again. "]
      : "Memories written since that version make the model stale again. ", next),
  ];
}

/** Block-aligned diff between two versions; citations numbered across both, footnotes for changed blocks. */
function blockDiff(bank, a, b) {
  const numbers = new Map();
  const blocksA = splitBlocks(a.text);
  const blocksB = splitBlocks(b.text);
  // numbered as the newer side reads (as the content above does), then what only the older side cites
  for (const block of [...blocksB, ...blocksA]) for (const id of block.citations) if (!numbers.has(id)) numbers.set(id, numbers.size + 1);
  const rows = diffItems(blocksA.map((x) => x.text), blocksB.map((x) => x.text));
  if (!rows.some((r) => r.op !== " ")) return h("p.muted", {}, "No difference.");
  const changedCitations = new Set();
  const cls = { "+": "add", "-": "del", " ": "same" };
  const words = { "+": "added", "-": "removed", " ": "unchanged" };
  const list = h("div.block-diff", { role: "list", "aria-label": `Diff from ${a.label} to ${b.label}` }, folded(rows).map((r) => {
    if (r.op === "…") return h("div.diff-block.fold", { role: "listitem" }, h("span.op"), h("div.diff-text.muted", {}, `⋯ ${r.count} unchanged blocks`));
    if (r.op !== " ") for (const m of r.line.matchAll(/\[mem:([A-Za-z0-9_-]+)\]/g)) changedCitations.add(m[1]);
    return h(`div.diff-block.${cls[r.op]}`, { role: "listitem" },
      h("span.sr", {}, `${words[r.op]}: `), h("span.op", { "aria-hidden": "true" }, r.op === " " ? "" : r.op),
      h("div.diff-text", {}, r.line.split("\n").map((line) => diffLine(line, numbers))));
  }));
  const notes = h("ol.footnotes", { "aria-label": "Memories cited by the changed blocks" });
  const ids = [...changedCitations].sort((x, y) => numbers.get(x) - numbers.get(y));
  for (const id of ids) {
    const item = h("li", { value: numbers.get(id) }, h("span.muted", {}, `memory ${id}`));
    notes.append(item);
    get(`${bankPath(bank)}/memories/${encodeURIComponent(id)}`)
      .then((m) => {
        item.replaceChildren(h("a", { href: `#/b/${encodeURIComponent(bank)}/mem/${encodeURIComponent(id)}` }, m.text));
        for (const sup of list.querySelectorAll("sup.cite")) if (sup.title === `cites memory ${id}`) sup.title = m.text;
      })
      .catch(() => item.replaceChildren(h("span.muted", {}, `memory ${id} (deleted)`)));
  }
  return h("div", {}, list, ids.length ? [h("h4", {}, "Cited by the changed blocks"), notes] : null);
}

export function historySection(bank, model, history, revert) {
  const versions = versionsOf(model, history);
  const current = versions.at(-1);
  const section = h("section", { "aria-labelledby": "history-title" },
    h("h2#history-title", {}, `History (${versions.length} version${versions.length === 1 ? "" : "s"})`));
  if (!history.length) {
    section.append(h("p.muted", {}, versions.length ? "Only the current version so far." : "No version yet: the model has not written content."));
    return section;
  }
  const byId = new Map(versions.filter((v) => v.entry).map((v) => [v.entry.id, v]));
  const rows = [];
  if (current && current.key === "current") {
    rows.push(h("tr.current", {}, h("td", {}, current.label), h("td", {}, "refreshed ", when(model.last_refreshed_at)),
      h("td.text", {}, preview(current.text)), h("td")));
  }
  for (const e of history) {
    if (e.kind === "refresh_failed") {
      rows.push(h("tr.failed", {}, h("td", {}, "Failed refresh"), h("td", {}, when(e.changed_at)),
        h("td.text", {}, `${(e.outcome || "").replace(/_/g, " ")}${e.failure_reason ? `: ${e.failure_reason.replace(/_/g, " ")}` : ""}${e.error_message ? ` — ${e.error_message}` : ""}`), h("td")));
      continue;
    }
    const v = byId.get(e.id);
    if (!v) continue; // the empty state the model started from
    rows.push(h("tr", { dataset: { history: e.id, version: v.version } },
      h("td", {}, v.label), h("td", {}, "replaced ", when(e.changed_at)),
      h("td.text", {}, preview(v.text)),
      h("td", {}, h("button.small", { type: "button", "aria-label": `Revert to version ${v.version}`, on: { click: async () => {
        const ok = await modal(`Revert to version ${v.version}?`, revertNote(model, v, current), { submit: `Revert to version ${v.version}` });
        if (ok) revert(e, v.version);
      } } }, "Revert"))));
  }
  section.append(h("div.table-wrap", {}, h("table.history-table", {},
    h("caption.sr", {}, "Versions and failed refreshes, most recent first"),
    h("thead", {}, h("tr", {}, ["Version", "When", "Content", ""].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows))));
  if (versions.length < 2) return section;

  const select = (label, chosen) => h("select", { "aria-label": label }, versions.map((o) => h("option", { value: o.key, selected: o.key === chosen }, o.label)));
  const from = select("Diff from", versions.at(-2).key);
  const to = select("Diff to", current.key);
  const out = h("div");
  const redraw = () => {
    const a = versions.find((o) => o.key === from.value);
    const b = versions.find((o) => o.key === to.value);
    out.replaceChildren(blockDiff(bank, a, b));
  };
  from.addEventListener("change", redraw);
  to.addEventListener("change", redraw);
  redraw();
  section.append(h("h3", {}, "Compare versions"),
    h("div.diff-controls", {}, h("label", {}, "From ", from), h("label", {}, "To ", to)), out);
  return section;
}

/** Diff rows with each run of unchanged blocks longer than 2 × ``context`` + 1 folded into {op: "…", count},
 * keeping ``context`` blocks next to each change (and the document's first block, its title). */
function folded(rows, context = 1) {
  const out = [];
  let run = [];
  const flush = (atEnd) => {
    const head = out.length ? run.slice(0, context) : run.slice(0, 1);
    const tail = atEnd ? [] : run.slice(run.length - context);
    if (run.length > head.length + tail.length + 1) out.push(...head, { op: "…", count: run.length - head.length - tail.length }, ...tail);
    else out.push(...run);
    run = [];
  };
  for (const r of rows) {
    if (r.op === " ") run.push(r);
    else { flush(false); out.push(r); }
  }
  flush(true);
  return out;
}

/** One line of a block in the diff: a heading in bold, a list item with its bullet, citations numbered. */
function diffLine(line, numbers) {
  const number = (id) => numbers.get(id);
  const curated = line.match(/^<!-- curated: (.*) -->$/); // a block a person edited or pinned (the marker's note)
  if (curated) return h("div.muted", {}, `✎ ${curated[1]}`);
  const heading = line.match(/^#{1,6}\s+(.*)$/);
  if (heading) return h("div", {}, h("strong", {}, inline(heading[1], number)));
  const item = line.match(/^(\s*)[-*+]\s+(.*)$/);
  if (item) return h("div.diff-item", {}, "• ", inline(item[2], number));
  return h("div", {}, inline(line, number));
}

function preview(text) {
  const first = (text || "").split("\n").find((l) => l.trim() && !l.startsWith("<!-- curated:")) || "(empty)";
  const clean = first.replace(/\[mem:[A-Za-z0-9_-]+\]/g, "").replace(/^#+\s*/, "").trim();
  return [h("span.muted", {}, `${text.length} chars · `), clean.length > 90 ? `${clean.slice(0, 90)}…` : clean];
}
