// Line diffs for the history view (the dry run's diff comes from the server already made).

import { h } from "./dom.js";

/** Longest-common-subsequence line diff: [{op: " " | "-" | "+", line}]. */
export function diffLines(before, after) {
  return diffItems((before || "").split("\n"), (after || "").split("\n"));
}

/** Longest-common-subsequence diff of two lists of strings (lines, or a document's blocks): [{op, line}]. */
export function diffItems(a, b) {
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push({ op: " ", line: a[i] }); i++; j++; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: "-", line: a[i++] });
    else out.push({ op: "+", line: b[j++] });
  }
  while (i < n) out.push({ op: "-", line: a[i++] });
  while (j < m) out.push({ op: "+", line: b[j++] });
  return out;
}

/** A diff as a <pre>: removed lines red, added green, long unchanged runs folded. */
export function renderDiff(lines, { label = "Differences", context = 3 } = {}) {
  if (!lines.some((l) => l.op !== " ")) return h("p.muted", {}, "No difference.");
  const rows = [];
  let run = [];
  const flushRun = (atEnd) => {
    if (run.length > context * 2 + 1) {
      const head = rows.length ? run.slice(0, context) : [];
      const tail = atEnd ? [] : run.slice(-context);
      rows.push(...head, { op: "…", line: `${run.length - head.length - tail.length} unchanged line(s)` }, ...tail);
    } else rows.push(...run);
    run = [];
  };
  for (const l of lines) {
    if (l.op === " ") run.push(l);
    else { flushRun(false); rows.push(l); }
  }
  flushRun(true);
  const cls = { "+": "add", "-": "del", " ": "same", "…": "fold" };
  return h("pre.diff", { "aria-label": label, tabindex: 0 },
    rows.map((r) => h(`span.${cls[r.op]}`, {}, `${r.op === "…" ? "⋯" : r.op} ${r.line}\n`)));
}

/** A unified diff text (as the dry run returns it) as a <pre> with the same colours. */
export function renderUnified(text, label = "Diff") {
  if (!text) return h("p.muted", {}, "No change: the refresh would leave the document as it is.");
  return h("pre.diff", { "aria-label": label, tabindex: 0 },
    text.split("\n").map((line) => {
      const cls = line.startsWith("+++") || line.startsWith("---") ? "head" : line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "same";
      return h(`span.${cls}`, {}, `${line}\n`);
    }));
}
