// DOM helpers: every view builds its elements with h(), so text from the server is only ever set as text (never
// parsed as HTML) — a memory or a model name cannot inject markup.

/** h("tag.class#id", {attrs, on: {click}}, ...children) → Element. Children: strings, nodes, arrays, null. */
export function h(spec, attrs = {}, ...children) {
  const [, tag = "div", rest = ""] = spec.match(/^([a-z0-9-]*)(.*)$/i);
  const el = document.createElement(tag || "div");
  for (const part of rest.match(/[.#][^.#]+/g) || []) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "on") {
      for (const [event, fn] of Object.entries(value)) el.addEventListener(event, fn);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "value") {
      el.value = value;
    } else if (key === "checked") {
      el.checked = Boolean(value);
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** A time as the reader's local "YYYY-MM-DD HH:MM:SS" (one format everywhere). */
export function stamp(iso) {
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A time as "YYYY-MM-DD HH:MM:SS UTC". */
export function utcStamp(iso) {
  return `${new Date(iso).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** stamp() (the reader's zone) in a <time> with the UTC time as a tooltip; "—" when unset. */
export function when(iso) {
  if (!iso) return h("span.muted", {}, "—");
  return h("time", { datetime: iso, title: utcStamp(iso) }, stamp(iso));
}

/** The reader's time zone, as the page shows times ("Europe/Berlin", or "UTC+01:00"). */
export function zoneName() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || "local time"; } catch { return "local time"; }
}

/** "3 min ago" / "in 2 h" relative to now. */
export function relative(iso) {
  if (!iso) return "";
  const seconds = Math.round((new Date(iso).getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  const [n, unit] = abs < 60 ? [abs, "s"] : abs < 3600 ? [Math.round(abs / 60), "min"] : abs < 86400 ? [Math.round(abs / 3600), "h"] : [Math.round(abs / 86400), "d"];
  return seconds >= 0 ? `in ${n} ${unit}` : `${n} ${unit} ago`;
}

export function badge(text, kind = "neutral", title = null) {
  return h(`span.badge.${kind}`, { title }, text);
}

const REASONS = {
  in_scope_writes: ["new memories in its scope", (n) => `${n} memor${n === 1 ? "y" : "ies"} in its scope written since`],
  cited_memory_gone: ["a memory it cites was deleted or left its scope", (n) => `${n} cited memor${n === 1 ? "y" : "ies"} deleted or out of its scope`],
  carried_over: ["facts carried over to the next refresh", (n) => `${n} fact${n === 1 ? "" : "s"} the last refresh could not place, carried over`],
  never_refreshed: ["never refreshed", () => "never refreshed"],
};

/** Why a model is stale, in words, from the API's staleness_reason (a list gives the kind; a model's GET adds
 * count and since, which the sentence then carries). Empty when the model is fresh. */
export function reasonWords(reason) {
  if (!reason) return "";
  const [short, counted] = REASONS[reason.kind] || [reason.kind.replace(/_/g, " "), null];
  if (counted === null || reason.count === undefined || reason.count === null) return short;
  const since = reason.kind === "in_scope_writes" && reason.since ? ` ${stamp(reason.since)}` : "";
  return counted(reason.count) + since;
}

/** The staleness badge, exactly as the API says (is_stale and staleness_reason), never computed here. */
export function staleBadge(model) {
  if (model.is_stale === true) return badge("Stale", "warn", model.staleness_reason ? `Stale: ${reasonWords(model.staleness_reason)}` : "Memories in this model's scope were written since it last read them");
  if (model.is_stale === false) return badge("Fresh", "ok", "No memory in its scope was written since its last refresh");
  return badge("Unknown", "neutral");
}

/** A trigger in words: when the model refreshes by itself. */
export function triggerWords(trigger, model = {}) {
  if (!trigger) return "—";
  const parts = [];
  if (trigger.refresh_after_consolidation) parts.push("after each consolidation");
  if (trigger.refresh_cron) {
    const next = model.next_refresh_at ? ` (next ${stamp(model.next_refresh_at)}, ${relative(model.next_refresh_at)})` : "";
    parts.push(`on cron “${trigger.refresh_cron}” UTC${next}`);
  }
  if (trigger.full_refresh_cron) {
    const next = model.next_full_refresh_at ? ` (next ${relative(model.next_full_refresh_at)})` : "";
    parts.push(`full rebuild on cron “${trigger.full_refresh_cron}” UTC${next}`);
  }
  let text = parts.length ? parts.join("; ") : "manual only";
  if (trigger.min_refresh_interval_seconds !== null && trigger.min_refresh_interval_seconds !== undefined) {
    text += trigger.min_refresh_interval_seconds > 0 ? `; at most every ${duration(trigger.min_refresh_interval_seconds)}` : "; no minimum interval";
  } else if (parts.length) {
    text += "; the bank's minimum interval applies";
  }
  return text;
}

/** A dry run's verdict in the words the CLI and the docs use: "would write" only when the content would change. */
export function dryRunVerdict(result) {
  const outcome = result.outcome || "";
  if (outcome === "content_written" && result.would_persist) return badge("would write: the content changes", "info");
  if (outcome === "content_written") return badge("would fail: the structured output cannot be produced", "bad");
  if (outcome === "content_unchanged" || outcome === "content_preserved_no_new_facts") return badge("no change: the content stays as it is", "neutral");
  return badge(`would fail: ${(result.failure_reason || outcome).replace(/_/g, " ")}`, "bad");
}

export function duration(seconds) {
  if (seconds % 86400 === 0) return `${seconds / 86400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** Numeric fields about tokens, cost or budgets, whatever their names (refresh governance adds them): [label, value]. */
export function spendFields(obj) {
  const out = [];
  for (const [key, value] of Object.entries(obj || {})) {
    // max_tokens and the recall budgets are sizes, not spend
    if (!/token|cost|spent|budget/i.test(key) || /max_tokens/.test(key) || value === null || value === undefined) continue;
    if (typeof value === "number") out.push([key.replace(/_/g, " "), value.toLocaleString()]);
    else if (typeof value === "object" && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) if (typeof v === "number") out.push([`${key.replace(/_/g, " ")} ${k}`, v.toLocaleString()]);
    }
  }
  return out;
}

/** "1,234 tokens · 3 LLM calls · $0.0042" for a spend figure of the API ({total_tokens, llm_calls, cost}); the
 * cost only once prices are configured (it is null until then); null when nothing was spent. */
export function spendText(totals) {
  if (!totals || !(totals.total_tokens || totals.llm_calls)) return null;
  const parts = [`${totals.total_tokens.toLocaleString()} tokens`, `${totals.llm_calls} LLM call${totals.llm_calls === 1 ? "" : "s"}`];
  if (typeof totals.cost === "number") parts.push(`$${totals.cost.toFixed(4)}`);
  return parts.join(" · ");
}

/** Spend today and in total ({today, total} of the API), with the daily budget when one applies. */
export function spendLine(spend, budget = null) {
  const today = spendText(spend && spend.today);
  const total = spendText(spend && spend.total);
  const parts = [`today: ${today || "nothing"}`];
  if (budget !== null && budget !== undefined) parts.push(`daily budget ${budget.toLocaleString()} tokens`);
  parts.push(`all time: ${total || "nothing"}`);
  return parts.join("; ");
}

export function field(label, control, hint = null) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  const hintId = hint ? `${id}-hint` : null;
  if (hintId) control.setAttribute("aria-describedby", hintId);
  return h("div.field", {}, h("label", { for: id }, label), control, hint ? h("p.hint", { id: hintId }, hint) : null);
}

/** A modal <dialog>: resolves with the value of onSubmit (or null when cancelled). */
export function modal(title, body, { submit = "OK", danger = false, onSubmit = () => true } = {}) {
  return new Promise((resolve) => {
    const error = h("p.error", { role: "alert" });
    const form = h("form", { method: "dialog" },
      h("h2", {}, title), body, error,
      h("div.actions",
        {},
        h("button", { type: "submit", class: danger ? "danger" : "primary" }, submit),
        h("button", { type: "button", on: { click: () => { dialog.close(); } } }, "Cancel"),
      ),
    );
    const dialog = h("dialog", { "aria-label": title }, form);
    let result = null;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        result = await onSubmit();
        dialog.close();
      } catch (err) {
        error.textContent = err.message || String(err);
      }
    });
    dialog.addEventListener("close", () => { dialog.remove(); resolve(result); });
    document.body.append(dialog);
    dialog.showModal();
    const first = dialog.querySelector("input, select, textarea, button");
    if (first) first.focus();
  });
}
