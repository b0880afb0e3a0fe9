// A bank's memories: a paged list with filters (fact type, tags with their match mode, document, when written, a
// plain text filter), a search box that asks /memories/recall and shows each hit's scores, and one memory's page
// (text, tags, metadata, times, source document and chunk, the facts an observation rests on, the observations a
// fact supports, the mental models and knowledge pages citing it, its history) with tag editing and delete, each
// stating what it does to the models citing it.

import { bankPath, del, get, patch, post } from "../api.js";
import { append, badge, field, h, modal, staleBadge, when } from "../dom.js";
import { bankTabs } from "./bank_nav.js";
import { derivedSection, memoryHistorySection } from "./memory_history.js";

const PAGE = 25;
const SEARCH_SHOWN = 20; // recall answers within a token budget; the best of them are what a reader looks at
const TYPES = ["world", "experience", "observation"];

/** "2026-12-01T10:00" (a datetime-local value, the reader's zone) → ISO UTC, or null. */
function localToIso(value) {
  return value ? new Date(value).toISOString() : null;
}

/** A memory row (list or recall hit): text, type, tags, date; the scores when it came from recall. */
function memoryRow(bank, m) {
  const scores = m.scores ? h("td.num", {}, h("span", { title: `semantic ${fmt(m.scores.semantic)} · keyword ${fmt(m.scores.keyword)}` }, fmt(m.scores.final)))
    : null;
  return h("tr", { dataset: { memory: m.id } },
    scores,
    h("td.text", {}, h("a", { href: `#/b/${encodeURIComponent(bank)}/mem/${encodeURIComponent(m.id)}` }, m.text)),
    h("td", {}, badge(m.fact_type || m.type, "neutral")),
    h("td", {}, m.tags.length ? m.tags.map((t) => h("span.tag", {}, t)) : h("span.muted", {}, "none")),
    h("td", {}, when(m.occurred_start || m.mentioned_at || m.created_at)),
  );
}

const fmt = (n) => (typeof n === "number" ? n.toFixed(3) : "—");

let flash = null; // a message for the memory page's next render (the outcome of an action that re-rendered it)

export async function memoriesView(main, [bank], query, ctx) {
  const bankHref = `#/b/${encodeURIComponent(bank)}`;
  ctx.setCrumbs([["Banks", "#/"], [bank, bankHref], ["Memories", null]]);
  const offset = Number(query.get("offset") || 0);
  const search = query.get("search") || "";
  const state = {
    type: query.get("type") || "", tags: query.get("tags") || "", match: query.get("match") || "any",
    document: query.get("document") || "", q: query.get("q") || "", after: query.get("after") || "", before: query.get("before") || "",
  };
  const tagList = state.tags.split(",").map((t) => t.trim()).filter(Boolean);

  const searchInput = h("input", { type: "search", value: search, placeholder: "What does Alice do on weekends?" });
  const typeSelect = h("select", {}, h("option", { value: "" }, "all"), TYPES.map((t) => h("option", { value: t, selected: t === state.type }, t)));
  const tagsInput = h("input", { type: "text", value: state.tags, placeholder: "user:alice", list: "tag-suggestions" });
  const matchSelect = h("select", {}, ["any", "all", "exact"].map((m) => h("option", { value: m, selected: m === state.match }, m)));
  const docInput = h("input", { type: "text", value: state.document, placeholder: "document id" });
  const textInput = h("input", { type: "text", value: state.q, placeholder: "contains…" });
  const afterInput = h("input", { type: "datetime-local", value: state.after });
  const beforeInput = h("input", { type: "datetime-local", value: state.before });

  const go = (changes = {}) => {
    const q = new URLSearchParams();
    const values = {
      search: searchInput.value.trim(), type: typeSelect.value, tags: tagsInput.value.trim(), match: matchSelect.value === "any" ? "" : matchSelect.value,
      document: docInput.value.trim(), q: textInput.value.trim(), after: afterInput.value, before: beforeInput.value, ...changes,
    };
    for (const [k, v] of Object.entries(values)) if (v) q.set(k, String(v));
    ctx.navigate(`${bankHref}/mem${q.toString() ? `?${q}` : ""}`);
  };
  const filterArgs = { type: state.type || null, tags: tagList, tags_match: state.match, document_id: state.document || null,
    q: state.q || null, written_after: localToIso(state.after), written_before: localToIso(state.before) };

  let results;
  let total;
  if (search) {
    const body = { query: search, max_tokens: 4096, budget: "mid" };
    if (state.type) body.types = [state.type];
    if (tagList.length) { body.tags = tagList; body.tags_match = state.match; }
    const answer = await post(`${bankPath(bank)}/memories/recall`, body);
    total = answer.results.length;
    results = answer.results.slice(0, SEARCH_SHOWN);
  } else {
    const page = await get(`${bankPath(bank)}/memories/list`, { ...filterArgs, limit: PAGE, offset });
    results = page.items;
    total = page.total;
  }
  const tags = await get(`${bankPath(bank)}/tags`, { limit: 200 }).catch(() => ({ items: [] }));

  append(main, [
    h("div.page-head", {}, h("h1", {}, "Memories"), h("span.spacer"), bankTabs(bank, "mem")),
    h("form.filters.search", { role: "search", on: { submit: (e) => { e.preventDefault(); go({ offset: "" }); } } },
      field("Search by meaning", searchInput, "Recall: the same hybrid search agents use, ranked with its scores."),
      h("button.primary", { type: "submit" }, "Search"),
      search ? h("button", { type: "button", on: { click: () => { searchInput.value = ""; go(); } } }, "Clear search") : null),
    h("form.filters", { on: { submit: (e) => { e.preventDefault(); go(); } } },
      field("Fact type", typeSelect), field("Tags", tagsInput), field("Tags match", matchSelect),
      search ? null : [field("Document", docInput), field("Text contains", textInput), field("Written after", afterInput), field("Written up to", beforeInput)],
      h("button", { type: "submit" }, "Apply")),
    h("datalist#tag-suggestions", {}, (tags.items || []).map((t) => h("option", { value: t.tag }))),
    h("p.muted.count", {}, search ? `${total} memor${total === 1 ? "y" : "ies"} recalled for “${search}”${total > results.length ? `; the best ${results.length} shown` : ""}, best first. Score: the fused relevance (hover for semantic and keyword).`
      : total ? `${offset + 1}–${Math.min(offset + PAGE, total)} of ${total} memories, newest write first.` : ""),
    results.length ? h("div.table-wrap", {}, h("table.memories-table", {},
      h("caption.sr", {}, search ? "Recalled memories with their scores" : "Memories"),
      h("thead", {}, h("tr", {}, [search ? "Score" : null, "Memory", "Type", "Tags", "When"].filter(Boolean).map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, results.map((m) => memoryRow(bank, m)))))
      : h("p.muted", {}, search ? "Recall found nothing for this query." : "No memory matches these filters."),
    search ? null : h("nav.pager", { "aria-label": "Memory pages" },
      h("button", { type: "button", disabled: offset === 0, on: { click: () => go({ offset: Math.max(0, offset - PAGE) || "" }) } }, "Previous"),
      h("button", { type: "button", disabled: offset + PAGE >= total, on: { click: () => go({ offset: offset + PAGE }) } }, "Next")),
  ]);
}

/** The models citing a memory, each linked with its staleness badge. */
function citersList(bank, citers) {
  if (!citers.length) return h("p.muted", {}, "No mental model or knowledge page cites this memory.");
  return h("ul.citers", {}, citers.map((m) => h("li", {},
    h("a", { href: `#/b/${encodeURIComponent(bank)}/m/${encodeURIComponent(m.id)}` }, m.name),
    m.is_knowledge_page ? h("span.muted", {}, " (knowledge page)") : null, " ", staleBadge(m))));
}

function consequence(citers, verb) {
  if (!citers.length) return `No mental model cites it, so ${verb} makes none stale (models whose scope it is in still see a write).`;
  const names = citers.map((m) => `“${m.name}”`).join(", ");
  return `${citers.length} model${citers.length === 1 ? "" : "s"} cite${citers.length === 1 ? "s" : ""} it (${names}): ${verb} makes ${citers.length === 1 ? "it" : "them"} stale until the next refresh.`;
}

export async function memoryView(main, [bank, id], _query, ctx) {
  const bankHref = `#/b/${encodeURIComponent(bank)}`;
  const base = `${bankPath(bank)}/memories/${encodeURIComponent(id)}`;
  const [memory, cited] = await Promise.all([get(base), get(`${base}/cited-by`)]);
  const citers = cited.mental_models;
  ctx.setCrumbs([["Banks", "#/"], [bank, bankHref], ["Memories", `${bankHref}/mem`], [memory.text.slice(0, 40) + (memory.text.length > 40 ? "…" : ""), null]]);
  const status = h("p.status", { role: "status", "aria-live": "polite" }, flash || "");
  flash = null;
  const done = (message) => { flash = message; ctx.rerender(); };
  const [chunk, sources, derived, history] = await Promise.all([
    memory.chunk_id ? get(`/v1/default/chunks/${encodeURIComponent(memory.chunk_id)}`).catch(() => null) : null,
    memory.source_memory_ids && memory.source_memory_ids.length
      ? Promise.all(memory.source_memory_ids.map((s) => get(`${bankPath(bank)}/memories/${encodeURIComponent(s)}`).catch(() => ({ id: s, missing: true }))))
      : [],
    memory.fact_type === "observation" ? null : derivedSection(bank, memory, done),
    memoryHistorySection(bank, memory),
  ]);

  const editTags = async () => {
    const input = h("input", { type: "text", value: memory.tags.join(", "), list: "tag-suggestions" });
    const done = await modal("Edit tags", [field("Tags (comma-separated)", input), h("p.warning", {}, `Changing tags is a memory write. ${consequence(citers, "it")} Models whose scope it enters or leaves go stale too.`)],
      { submit: "Save tags", onSubmit: () => patch(base, { tags: input.value.split(",").map((t) => t.trim()).filter(Boolean) }) });
    if (done) ctx.rerender();
  };
  const remove = async () => {
    const done = await modal("Delete this memory?", [h("p", {}, `“${memory.text}”`), h("p.warning", {}, `It is removed from every index; this cannot be undone. ${consequence(citers, "deleting it")}`)],
      { submit: "Delete memory", danger: true, onSubmit: () => del(base) });
    if (done) ctx.navigate(`${bankHref}/mem`);
  };

  append(main, [
    h("div.page-head", {}, h("h1", {}, "Memory"), badge(memory.fact_type, "neutral"), h("span.spacer"), bankTabs(bank, "mem")),
    h("blockquote.memory-text", {}, memory.text),
    h("div.actions", {},
      // an observation takes its tags from its scope: the API refuses to edit one
      memory.fact_type === "observation" ? null : h("button", { type: "button", on: { click: editTags } }, "Edit tags"),
      h("button.danger", { type: "button", on: { click: remove } }, "Delete")),
    status,
    h("dl.facts", {},
      h("dt", {}, "Id"), h("dd", {}, h("code", {}, memory.id)),
      h("dt", {}, "Tags"), h("dd", {}, memory.tags.length ? memory.tags.map((t) => h("span.tag", {}, t)) : "none"),
      memory.context ? [h("dt", {}, "Context"), h("dd", {}, memory.context)] : null,
      h("dt", {}, "Occurred"), h("dd", {}, when(memory.occurred_start), memory.occurred_end && memory.occurred_end !== memory.occurred_start ? [" – ", when(memory.occurred_end)] : null),
      h("dt", {}, "Mentioned"), h("dd", {}, when(memory.mentioned_at), memory.mention_count > 1 ? ` · retained ${memory.mention_count} times` : null),
      h("dt", {}, "Written"), h("dd", {}, when(memory.created_at), memory.updated_at !== memory.created_at ? [" · last changed ", when(memory.updated_at)] : null),
      h("dt", {}, "Metadata"), h("dd", {}, Object.keys(memory.metadata || {}).length ? Object.entries(memory.metadata).map(([k, v]) => h("span.tag", {}, `${k}: ${v}`)) : "none"),
      h("dt", {}, "Source document"), h("dd", {}, memory.document_id
        ? h("a", { href: `${bankHref}/docs/${encodeURIComponent(memory.document_id)}` }, memory.document_id) : h("span.muted", {}, "none")),
    ),
    chunk ? h("section", { "aria-labelledby": "chunk-title" }, h("h2#chunk-title", {}, `Source chunk #${chunk.chunk_index}`), h("pre.chunk", {}, chunk.chunk_text)) : null,
    sources.length ? h("section", { "aria-labelledby": "sources-title" }, h("h2#sources-title", {}, `Facts this observation rests on (${sources.length})`),
      h("ul.citers", {}, sources.map((s) => h("li", {}, s.missing ? h("span.muted", {}, `${s.id} (deleted)`)
        : h("a", { href: `${bankHref}/mem/${encodeURIComponent(s.id)}` }, s.text))))) : null,
    derived,
    h("section", { "aria-labelledby": "citers-title" }, h("h2#citers-title", {}, "Cited by"), citersList(bank, citers)),
    history,
  ]);
}
