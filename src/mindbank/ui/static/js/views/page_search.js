// Knowledge-page search for the tree panel: GET /knowledge-base/search (BM25 and vector rankings fused), each hit
// with its folder-free name, fused score and snippet, linked to the page's mental model.

import { bankPath, get } from "../api.js";
import { h } from "../dom.js";

/** A search form and its results; the element keeps its state when moved into a re-rendered panel. */
export function pageSearch(bank) {
  const input = h("input", { type: "search", placeholder: "Search pages…", "aria-label": "Search knowledge pages" });
  const results = h("div.page-hits", { "aria-live": "polite" });
  const run = async () => {
    const q = input.value.trim();
    if (!q) { results.replaceChildren(); return; }
    try {
      const answer = await get(`${bankPath(bank)}/knowledge-base/search`, { q, limit: 10 });
      results.replaceChildren(answer.results.length
        ? h("ol.page-hits-list", { "aria-label": `Pages matching ${q}` }, answer.results.map((r) => h("li", {},
          h("a", { href: `#/b/${encodeURIComponent(bank)}/m/${encodeURIComponent(r.mental_model_id)}` }, r.name),
          h("span.muted", { title: "fused BM25 + vector score, 0..1" }, ` ${r.score.toFixed(2)}`),
          r.snippet ? h("div.sub", {}, r.snippet) : null)))
        : h("p.muted", {}, `No page matches “${q}”.`));
    } catch (err) { results.replaceChildren(h("p.error", { role: "alert" }, err.message)); }
  };
  return h("form.page-search", { role: "search", on: { submit: (e) => { e.preventDefault(); run(); } } },
    h("div.inline", {}, input, h("button", { type: "submit" }, "Search"),
      h("button", { type: "button", on: { click: () => { input.value = ""; run(); } } }, "Clear")),
    results);
}
