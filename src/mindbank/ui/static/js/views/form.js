// The model form: create a mental model, create a knowledge page (in a folder), or edit a model — name, question,
// tags, size and trigger — with a live scope preview (how many memories the scope reaches now) and its warning when
// the scope is empty.

import { bankPath, get, patch, post } from "../api.js";
import { append, field, h } from "../dom.js";

const PAGE_MAX_TOKENS = 4096; // the page default of POST /knowledge-base/pages (models: 2048)
const TYPES = ["world", "experience", "observation"];

function findPage(nodes, modelId) {
  for (const node of nodes) {
    if (node.mental_model_id === modelId) return node.id;
    const found = findPage(node.children || [], modelId);
    if (found) return found;
  }
  return null;
}

function findName(nodes, id) {
  for (const node of nodes) {
    if (node.id === id) return node.name;
    const found = findName(node.children || [], id);
    if (found) return found;
  }
  return null;
}

export async function formView(main, [bank, id], query, ctx) {
  const editing = Boolean(id);
  const kind = editing ? "model" : query.get("kind") === "page" ? "page" : "model";
  const parent = query.get("parent");
  const bankHref = `#/b/${encodeURIComponent(bank)}`;
  let model = null;
  let trigger;
  let folderName = null;
  let pageNode = null; // editing a knowledge page: its node, patched through the knowledge base (name kept in step)
  if (editing) {
    model = await get(`${bankPath(bank)}/mental-models/${encodeURIComponent(id)}`);
    trigger = model.trigger;
    if (model.is_knowledge_page) pageNode = findPage((await get(`${bankPath(bank)}/knowledge-base/tree`)).roots, id);
  } else if (kind === "page") {
    // the bank's effective page default (its override, the server's, or the reference's), and the folder's name
    const [config, tree] = await Promise.all([
      get(`${bankPath(bank)}/config`).catch(() => ({ config: {} })),
      parent ? get(`${bankPath(bank)}/knowledge-base/tree`) : null,
    ]);
    trigger = config.config.knowledge_page_default_trigger || {};
    folderName = parent ? findName(tree.roots, parent) : null;
  } else {
    // a new model from the form keeps itself fresh unless told otherwise (the API's default stays manual, as in
    // the reference: a script gets what it asks for)
    trigger = { refresh_after_consolidation: true };
  }
  const title = editing ? `Edit “${model.name}”` : kind === "page" ? "New knowledge page" : "New mental model";
  ctx.setCrumbs([["Banks", "#/"], [bank, bankHref], [title, null]]);

  const name = h("input", { type: "text", required: true, maxlength: 256, value: model ? model.name : "", autofocus: true });
  const question = h("textarea", { required: true, rows: 2 }, model ? model.source_query : "");
  const tags = h("input", { type: "text", value: model ? model.tags.join(", ") : "", placeholder: "user:alice, project:x", list: "form-tags" });
  // the bank's tags as suggestions (a failure only loses the suggestions)
  const tagSuggestions = h("datalist#form-tags");
  get(`${bankPath(bank)}/tags`, { limit: 200 }).then((t) => tagSuggestions.append(...t.items.map((i) => h("option", { value: i.tag }, `${i.count} memories`)))).catch(() => {});
  const maxTokens = h("input", { type: "number", min: 256, max: 8192, step: 1, value: model ? model.max_tokens : kind === "page" ? PAGE_MAX_TOKENS : 2048 });
  const mode = h("select", {}, ["full", "delta"].map((m) => h("option", { value: m, selected: (trigger.mode || "full") === m }, m === "full" ? "full (rewrite each time)" : "delta (edit in place)")));
  const when = trigger.refresh_cron ? "cron" : trigger.refresh_after_consolidation ? "consolidation" : "manual";
  const refresh = h("select", {},
    h("option", { value: "consolidation", selected: when === "consolidation" }, "after each consolidation"),
    h("option", { value: "cron", selected: when === "cron" }, "on a schedule (cron)"),
    h("option", { value: "manual", selected: when === "manual" }, "only when asked (manual)"));
  const FRESHNESS = {
    consolidation: "Stays fresh by itself: after new memories are consolidated, a stale model refreshes (at most once per minimum interval).",
    cron: "Refreshes on the schedule below, and only when memories in its scope changed since its last refresh.",
    manual: "Never refreshes by itself: it goes stale as memories arrive until someone presses Refresh (or calls the API).",
  };
  const freshnessHint = h("p.hint", { id: "f-refresh-hint" });
  refresh.setAttribute("aria-describedby", "f-refresh-hint");
  const cron = h("input", { type: "text", value: trigger.refresh_cron || "", placeholder: "0 3 * * *" });
  const fullCron = h("input", { type: "text", value: trigger.full_refresh_cron || "", placeholder: "0 3 * * 0" });
  const interval = h("input", { type: "number", min: 0, step: 1, value: trigger.min_refresh_interval_seconds ?? "" });
  const tagsMatch = h("select", {},
    h("option", { value: "" }, "default (all_strict when tagged)"),
    ["any", "all", "any_strict", "all_strict", "exact"].map((m) => h("option", { value: m, selected: trigger.tags_match === m }, m)));
  const typeBoxes = TYPES.map((t) => h("input", { type: "checkbox", value: t, id: `f-type-${t}`, checked: (trigger.fact_types || []).includes(t) }));
  const keepTrace = h("input", { type: "checkbox", id: "f-keep-trace", checked: trigger.keep_trace });
  const preview = h("div.preview", { role: "status", "aria-live": "polite" });
  const error = h("p.error", { role: "alert" });
  const cronRow = field("Cron expression (UTC, 5 fields)", cron, "Required for a schedule; a scheduled refresh runs only when the model is stale.");

  const list = (text) => text.split(",").map((t) => t.trim()).filter(Boolean);
  const triggerBody = () => {
    const types = typeBoxes.filter((b) => b.checked).map((b) => b.value);
    return {
      mode: mode.value,
      refresh_after_consolidation: refresh.value === "consolidation",
      refresh_cron: refresh.value === "cron" ? cron.value.trim() || null : null,
      full_refresh_cron: fullCron.value.trim() || null,
      min_refresh_interval_seconds: interval.value === "" ? null : Number(interval.value),
      tags_match: tagsMatch.value || null,
      fact_types: types.length ? types : null,
      keep_trace: keepTrace.checked,
    };
  };

  let timer = null;
  let seq = 0;
  const updatePreview = () => {
    clearTimeout(timer);
    cronRow.hidden = refresh.value !== "cron";
    freshnessHint.textContent = FRESHNESS[refresh.value];
    timer = setTimeout(async () => {
      const mine = ++seq;
      try {
        const p = await post(`${bankPath(bank)}/mental-models/scope-preview`, { tags: list(tags.value), trigger: { tags_match: tagsMatch.value || null, fact_types: triggerBody().fact_types } });
        if (mine !== seq) return;
        const by = Object.entries(p.by_fact_type).map(([k, n]) => `${n} ${k}`).join(", ");
        const how = p.tags.length ? `tags ${p.tags.join(", ")} matched ${p.tags_match}` : "no tag filter";
        preview.replaceChildren(...[
          h("p", {}, h("strong", {}, `Scope: ${p.total} memor${p.total === 1 ? "y" : "ies"}`), ` (${by}; ${how}${p.fact_types ? `; ${p.fact_types.join(", ")} only` : ""})`),
          p.total === 0 ? h("p.warning", {}, "This scope matches no memories right now, so a refresh will find nothing. ",
            p.tags.length && p.tags_match === "all_strict" ? "Tagged models match all_strict by default: every tag must be on the memory. Set “Tags match” to any if your memories carry only some of these tags, or check the fact types." : "Check the tags and fact types.") : null,
          p.pending_consolidation ? h("p.warning", {}, `${p.pending_consolidation} facts in scope, consolidation pending: observations are formed from them when it runs.`) : null].filter(Boolean));
      } catch (err) {
        if (mine === seq) preview.replaceChildren(h("p.warning", {}, `Scope preview: ${err.message}`));
      }
    }, 250);
  };
  for (const el of [tags, tagsMatch, ...typeBoxes, refresh]) el.addEventListener(el.tagName === "INPUT" && el.type === "text" ? "input" : "change", updatePreview);

  const submit = async (event) => {
    event.preventDefault();
    error.textContent = "";
    const button = event.submitter || form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const body = { name: name.value.trim(), source_query: question.value.trim(), tags: list(tags.value), max_tokens: Number(maxTokens.value), trigger: triggerBody() };
      let target;
      if (editing) {
        await patch(pageNode ? `${bankPath(bank)}/knowledge-base/nodes/${encodeURIComponent(pageNode)}` : `${bankPath(bank)}/mental-models/${encodeURIComponent(id)}`, body);
        target = `${bankHref}/m/${encodeURIComponent(id)}`;
      } else if (kind === "page") {
        const created = await post(`${bankPath(bank)}/knowledge-base/pages`, { ...body, parent_id: parent || null });
        target = `${bankHref}/m/${encodeURIComponent(created.mental_model_id)}?op=${encodeURIComponent(created.operation_id)}`;
      } else {
        const created = await post(`${bankPath(bank)}/mental-models`, body);
        target = `${bankHref}/m/${encodeURIComponent(created.mental_model_id)}?op=${encodeURIComponent(created.operation_id)}`;
      }
      ctx.navigate(target);
    } catch (err) {
      error.textContent = err.message;
      button.disabled = false;
    }
  };

  const form = h("form.model-form", { on: { submit } },
    field("Name", name),
    field("Source query", question, "The standing question the document answers, asked again at every refresh."),
    field("Tags", tags, "Comma-separated. Tags SCOPE the memories the model reads; they are not labels."), tagSuggestions,
    h("fieldset", {}, h("legend", {}, "Scope"),
      field("Tags match", tagsMatch),
      h("div.field", { role: "group", "aria-labelledby": "types-label" }, h("span#types-label.label", {}, "Fact types (none checked: all)"),
        h("div.checks", {}, typeBoxes.map((box) => h("span.check", {}, box, h("label", { for: box.id }, box.value))))),
      preview),
    h("fieldset", {}, h("legend", {}, "Refresh"),
      field("Refreshes", refresh), freshnessHint, cronRow,
      field("Mode", mode),
      field("Full rebuild cron (optional)", fullCron, "A scheduled full rewrite, independent of the above."),
      field("Minimum interval (seconds)", interval, "Empty: the bank's setting. Automatic refreshes sooner than this wait (parked)."),
      field("Max tokens", maxTokens, "Document size target, 256–8192."),
      h("div.field.check", {}, keepTrace, h("label", { for: keepTrace.id }, "Keep trace (record how each refresh ran)"))),
    error,
    h("div.actions", {},
      h("button.primary", { type: "submit" }, editing ? "Save changes" : kind === "page" ? "Create page" : "Create mental model"),
      h("a.button", { href: editing ? `${bankHref}/m/${encodeURIComponent(id)}` : bankHref }, "Cancel")));

  append(main, [h("h1", {}, title), kind === "page" ? h("p.muted", {}, folderName ? `In the folder “${folderName}”.` : "At the top level of the knowledge base.") : null, form]);
  updatePreview();
}
