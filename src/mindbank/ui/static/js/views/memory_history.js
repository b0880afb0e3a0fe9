// What a memory's page shows of where it led and how it changed: the observations built from a fact (linked, with
// clearing them), an observation's history (each consolidation change: the text before and after, the facts it
// added or dropped) and, for a fact, the changes recorded for it and its document (edits, retags, updates).

import { bankPath, del, get } from "../api.js";
import { h, modal, when } from "../dom.js";

const memoryHref = (bank, id) => `#/b/${encodeURIComponent(bank)}/mem/${encodeURIComponent(id)}`;

/** The observations built from a fact, linked, and a button clearing them (they are consolidated again). */
export async function derivedSection(bank, memory, done) {
  const base = `${bankPath(bank)}/memories/${encodeURIComponent(memory.id)}`;
  const derived = await get(`${base}/observations`);
  const clearThem = async () => {
    const ok = await modal("Clear the observations built from this memory?", [
      h("p", {}, `${derived.total} observation${derived.total === 1 ? "" : "s"} will be deleted; the memory stays and is consolidated again, which builds its observations anew.`),
      h("p.warning", {}, "Deleting an observation is a memory write: mental models citing it go stale until their next refresh."),
    ], { submit: "Clear observations", danger: true, onSubmit: () => del(`${base}/observations`) });
    if (ok) done(`Observations cleared: ${derived.total} deleted; consolidation builds them again.`);
  };
  return h("section", { "aria-labelledby": "derived-title" },
    h("h2#derived-title", {}, `Observations built from this memory (${derived.total})`),
    derived.total
      ? [h("ul.citers.derived", {}, derived.items.map((o) => h("li", {}, h("a", { href: memoryHref(bank, o.id) }, o.text),
        h("span.muted", {}, ` · ${o.proof_count || 1} fact${(o.proof_count || 1) === 1 ? "" : "s"}`)))),
      h("button", { type: "button", on: { click: clearThem } }, "Clear these observations")]
      : h("p.muted", {}, "No observation is built from it (yet: consolidation may not have run, or it said too little to stand on its own)."));
}

/** A list of facts a change added ("+") or dropped ("−"), each linked while it exists. */
function factList(bank, facts, sign, words) {
  if (!facts.length) return null;
  return h(`ul.change-facts.${words}`, { "aria-label": `facts ${words}` }, facts.map((f) => h("li", {},
    h("span.sign", { "aria-hidden": "true" }, sign), h("span.sr", {}, `${words}: `),
    f.text === null ? h("span.muted", {}, `${f.id} (deleted since)`) : h("a", { href: memoryHref(bank, f.id) }, f.text))));
}

/** An observation's history: GET /memories/{id}/history, newest change first. */
async function observationHistory(bank, memory) {
  const changes = await get(`${bankPath(bank)}/memories/${encodeURIComponent(memory.id)}/history`);
  const intro = h("p.muted", {}, "Each time consolidation changed this observation, newest first: its text before and after, and the facts the change added or dropped (an observation restated as a new one keeps the history of the one it replaced).");
  if (!changes.length) return [intro, h("p.muted", {}, "No change since it was created.")];
  return [intro, h("ol.changes", { reversed: true }, changes.map((c) => h("li.change", {},
    h("p.change-when", {}, when(c.changed_at)),
    c.previous_text !== c.text ? h("dl.was-now", {}, h("dt", {}, "was"), h("dd", {}, c.previous_text), h("dt", {}, "now"), h("dd", {}, c.text))
      : h("p.muted", {}, "Text unchanged."),
    factList(bank, c.source_facts_added, "+", "added"),
    factList(bank, c.source_facts_removed, "−", "dropped"))))];
}

const EVENT_WORDS = {
  retain: "its document was retained", append: "its document was appended to", reprocess: "its document was re-extracted",
  retag: "its document and its facts were retagged", update: "its document's tags, metadata or time were updated in place",
  fact_edited: "this memory was edited (text, tags, context or metadata)",
};

/** A fact's recorded changes: its document's history, kept to the events about this fact or its whole document. */
async function factHistory(bank, memory) {
  const intro = h("p.muted", {}, "What is shown: when this memory was written and last changed, and the changes recorded for it and its document. mindbank records that a fact was edited or retagged, not its earlier text.");
  const written = h("li.change", {}, h("p.change-when", {}, when(memory.created_at)), h("p", {}, "written"));
  const last = memory.updated_at !== memory.created_at ? h("li.change", {}, h("p.change-when", {}, when(memory.updated_at)), h("p", {}, "last changed")) : null;
  let events = [];
  if (memory.document_id) {
    const page = await get(`${bankPath(bank)}/documents/${encodeURIComponent(memory.document_id)}/history`, { limit: 100 }).catch(() => ({ items: [] }));
    events = page.items.filter((e) => e.fact_id === memory.id || (!e.fact_id && e.kind !== "retain" && EVENT_WORDS[e.kind]));
  }
  const rows = events.map((e) => h("li.change", { dataset: { kind: e.kind } }, h("p.change-when", {}, when(e.created_at)), h("p", {}, EVENT_WORDS[e.kind] || e.kind)));
  return [intro, h("ol.changes", {}, rows, last && !rows.length ? last : null, written)];
}

/** The memory's own history section (an observation's changes, or a fact's recorded edits). */
export async function memoryHistorySection(bank, memory) {
  const body = memory.fact_type === "observation" ? await observationHistory(bank, memory) : await factHistory(bank, memory);
  return h("section", { "aria-labelledby": "mem-history-title" }, h("h2#mem-history-title", {}, "History"), body);
}
