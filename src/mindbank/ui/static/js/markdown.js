// A small, safe markdown renderer for mental-model documents. The document is a sequence of blocks separated by
// blank lines (the structured document's own unit: a heading, a paragraph, a list); each block records the memories
// it cites as [mem:<id>]. Rendering builds DOM nodes (never parsing HTML), links and images become plain text (the page
// never fetches anything a memory points at), and every block keeps its citations for the provenance panel.

import { h } from "./dom.js";

const CITATION = /\[mem:([A-Za-z0-9_-]+)\]/g;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Split markdown into blocks: [{text, citations: [memory ids]}] (blank lines outside fenced code separate). */
export function splitBlocks(markdown) {
  const blocks = [];
  let current = [];
  let fence = null;
  const flush = () => {
    if (current.length) {
      const text = current.join("\n");
      blocks.push({ text, citations: [...new Set([...text.matchAll(CITATION)].map((m) => m[1]))] });
    }
    current = [];
  };
  for (const line of (markdown || "").replace(/\r\n?/g, "\n").split("\n")) {
    const open = line.match(FENCE);
    if (fence) {
      current.push(line);
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
      continue;
    }
    if (open) { current.push(line); fence = open[1]; continue; }
    if (!line.trim()) { flush(); continue; }
    if (/^#{1,6}\s/.test(line) && current.length) flush();
    current.push(line);
    if (/^#{1,6}\s/.test(line)) flush();
  }
  flush();
  return blocks;
}

/** Inline markdown to nodes: **bold**, *italic*, `code`, [text](url) as text, [mem:id] as a numbered citation. */
export function inline(text, citationNumber = () => null) {
  const out = [];
  const pattern = /(\[mem:[A-Za-z0-9_-]+\])|\*\*([^*]+)\*\*|`([^`]+)`|(?<![\w*])\*([^*\s][^*]*?)\*(?!\w)|!?\[([^\]]*)\]\(([^)\s]*)[^)]*\)/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) {
      const id = m[1].slice(5, -1);
      const n = citationNumber(id);
      out.push(h("sup.cite", { title: `cites memory ${id}` }, n ? `[${n}]` : "[mem]"));
    } else if (m[2] !== undefined) out.push(h("strong", {}, m[2]));
    else if (m[3] !== undefined) out.push(h("code", {}, m[3]));
    else if (m[4] !== undefined) out.push(h("em", {}, m[4]));
    else out.push(h("span.link", { title: m[6] }, m[5]));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const CURATED = /^<!-- curated: (.*) -->$/;

/** One block's body as elements (heading, list, code, quote or paragraph). A leading "<!-- curated: … -->" line (a
 * block a person wrote or pinned) becomes the element's tooltip. */
export function renderBlock(text, citationNumber) {
  const lines = text.split("\n");
  const curated = lines.length > 1 ? lines[0].match(CURATED) : null;
  if (curated) {
    const el = renderBlock(lines.slice(1).join("\n"), citationNumber);
    el.title = curated[1];
    el.classList.add("curated");
    return el;
  }
  const heading = lines[0].match(/^(#{1,6})\s+(.*)$/);
  if (heading && lines.length === 1) {
    return h(`h${Math.min(6, heading[1].length + 1)}`, {}, inline(heading[2].replace(/\s+#+\s*$/, ""), citationNumber));
  }
  if (FENCE.test(lines[0])) {
    return h("pre", {}, h("code", {}, lines.slice(1, FENCE.test(lines[lines.length - 1]) ? -1 : undefined).join("\n")));
  }
  if (lines.every((l) => /^\s*([-*+]|\d+[.)])\s+/.test(l) || /^\s{2,}\S/.test(l))) {
    const ordered = /^\s*\d+[.)]\s/.test(lines[0]);
    const items = [];
    for (const line of lines) {
      const item = line.match(/^\s*(?:[-*+]|\d+[.)])\s+(.*)$/);
      if (item) items.push(item[1]);
      else if (items.length) items[items.length - 1] += ` ${line.trim()}`;
    }
    return h(ordered ? "ol" : "ul", {}, items.map((item) => h("li", {}, inline(item, citationNumber))));
  }
  if (lines.every((l) => l.startsWith(">"))) {
    return h("blockquote", {}, inline(lines.map((l) => l.replace(/^>\s?/, "")).join(" "), citationNumber));
  }
  return h("p", {}, inline(lines.join(" "), citationNumber));
}
