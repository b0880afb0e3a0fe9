// A bank's documents: a paged list (search by id or text), and one document's page: its metadata, memories by
// fact type, chunks, and the actions delete (its memories go with it) and reprocess (re-extract with the current
// retain engine).

import { bankPath, del, follow, get, post } from "../api.js";
import { append, badge, field, h, modal, when } from "../dom.js";
import { bankTabs } from "./bank_nav.js";

const PAGE = 25;

export async function documentsView(main, [bank], query, ctx) {
  const bankHref = `#/b/${encodeURIComponent(bank)}`;
  ctx.setCrumbs([["Banks", "#/"], [bank, bankHref], ["Documents", null]]);
  const offset = Number(query.get("offset") || 0);
  const q = query.get("q") || "";
  const page = await get(`${bankPath(bank)}/documents`, { q: q || null, limit: PAGE, offset });
  const input = h("input", { type: "search", value: q, placeholder: "id or text" });
  const go = (o) => ctx.navigate(`${bankHref}/docs?${new URLSearchParams({ ...(input.value.trim() ? { q: input.value.trim() } : {}), ...(o ? { offset: String(o) } : {}) })}`);
  append(main, [
    h("div.page-head", {}, h("h1", {}, "Documents"), h("span.spacer"), bankTabs(bank, "docs")),
    h("form.filters", { role: "search", on: { submit: (e) => { e.preventDefault(); go(0); } } }, field("Find a document", input), h("button", { type: "submit" }, "Search")),
    page.items.length ? h("div.table-wrap", {}, h("table", {},
      h("caption.sr", {}, "Documents, newest first"),
      h("thead", {}, h("tr", {}, ["Document", "Memories", "Length", "Tags", "Updated"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, page.items.map((d) => h("tr", { dataset: { document: d.id } },
        h("th.text", { scope: "row" }, h("a", { href: `${bankHref}/docs/${encodeURIComponent(d.id)}` }, d.id)),
        h("td.num", {}, String(d.memory_unit_count)),
        h("td.num", {}, `${d.text_length.toLocaleString()} chars`),
        h("td", {}, d.tags.length ? d.tags.map((t) => h("span.tag", {}, t)) : h("span.muted", {}, "none")),
        h("td", {}, when(d.updated_at)))))))
      : h("p.muted", {}, q ? "No document matches." : "No document yet: retain items with a document_id, or upload files."),
    h("nav.pager", { "aria-label": "Document pages" },
      h("button", { type: "button", disabled: offset === 0, on: { click: () => go(Math.max(0, offset - PAGE)) } }, "Previous"),
      h("span.muted", {}, page.total ? `${offset + 1}–${Math.min(offset + PAGE, page.total)} of ${page.total}` : ""),
      h("button", { type: "button", disabled: offset + PAGE >= page.total, on: { click: () => go(offset + PAGE) } }, "Next")),
  ]);
}

export async function documentView(main, [bank, id], _query, ctx) {
  const bankHref = `#/b/${encodeURIComponent(bank)}`;
  const base = `${bankPath(bank)}/documents/${encodeURIComponent(id)}`;
  const [doc, chunks] = await Promise.all([get(base), get(`${base}/chunks`, { limit: 200 })]);
  ctx.setCrumbs([["Banks", "#/"], [bank, bankHref], ["Documents", `${bankHref}/docs`], [id, null]]);
  const status = h("p.status", { role: "status", "aria-live": "polite" });
  const types = Object.entries(doc.nodes_by_fact_type || {}).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(", ") || "none";
  const remove = async () => {
    const done = await modal(`Delete document “${id}”?`, h("p.warning", {},
      `The document, its ${chunks.total} chunk(s) and the ${doc.memory_unit_count} memor${doc.memory_unit_count === 1 ? "y" : "ies"} drawn from it are deleted; mental models citing them go stale. This cannot be undone.`),
    { submit: "Delete document", danger: true, onSubmit: () => del(base) });
    if (done) ctx.navigate(`${bankHref}/docs`);
  };
  const reprocess = async (e) => {
    e.target.disabled = true;
    try {
      const { operation_id: op } = await post(`${base}/reprocess`);
      const final = await follow(bank, op, (o) => { status.textContent = `Reprocess: ${o.status}…`; });
      status.textContent = `Reprocess: ${final.status}${final.error_message ? ` — ${final.error_message}` : ""}.`;
    } catch (err) { status.textContent = `Reprocess failed: ${err.message}`; }
    e.target.disabled = false;
  };
  append(main, [
    h("div.page-head", {}, h("h1", {}, `Document ${id}`), h("span.spacer"), bankTabs(bank, "docs")),
    h("div.actions", {},
      h("a.button", { href: `${bankHref}/mem?document=${encodeURIComponent(id)}` }, `Its memories (${doc.memory_unit_count})`),
      h("button", { type: "button", on: { click: reprocess } }, "Reprocess"),
      h("button.danger", { type: "button", on: { click: remove } }, "Delete")),
    status,
    h("dl.facts", {},
      h("dt", {}, "Memories"), h("dd", {}, types),
      h("dt", {}, "Tags"), h("dd", {}, doc.tags.length ? doc.tags.map((t) => h("span.tag", {}, t)) : "none"),
      h("dt", {}, "Created"), h("dd", {}, when(doc.created_at)),
      h("dt", {}, "Updated"), h("dd", {}, when(doc.updated_at)),
      h("dt", {}, "Content hash"), h("dd", {}, h("code", {}, doc.content_hash || "—"))),
    h("section", { "aria-labelledby": "chunks-title" }, h("h2#chunks-title", {}, `Chunks (${chunks.total})`),
      chunks.items.length ? h("ol.chunks", {}, chunks.items.map((c) => h("li", { value: c.chunk_index, id: `chunk-${c.chunk_id}` },
        h("p.meta", {}, badge(`chunk #${c.chunk_index}`, "neutral"), " ", h("span.muted", {}, c.chunk_id)), h("pre.chunk", {}, c.chunk_text))))
        : h("p.muted", {}, "No chunk stored.")),
  ]);
}
