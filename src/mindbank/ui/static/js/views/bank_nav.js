// The links between a bank's views (models and pages, memories, documents, operations), on every bank page.

import { h } from "../dom.js";

const TABS = [["", "Models & pages"], ["/mem", "Memories"], ["/docs", "Documents"], ["/ops", "Operations"]];

/** The bank's view links; ``current`` is the key of the view shown ("", "mem", "docs" or "ops"). */
export function bankTabs(bank, current) {
  const base = `#/b/${encodeURIComponent(bank)}`;
  return h("nav.bank-tabs", { "aria-label": "Bank views" },
    TABS.map(([path, label]) => h("a.button", { href: `${base}${path}`, "aria-current": path.slice(1) === current ? "page" : null }, label)));
}
