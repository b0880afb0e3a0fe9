// Curation of one mental model by people (docs/curation.md): the draft waiting for review (its diff, Approve,
// Reject with a reason), and, in a panel collapsed until opened, the document by block — edit a block in place, add one, pin and unpin blocks and
// sections, and each block's origin (a refresh, or the person who edited it) on hover. Refreshes keep what a person
// wrote or pinned as it is.

import { del, get, patch, post } from "../api.js";
import { badge, field, h, modal, stamp } from "../dom.js";
import { renderUnified } from "../diff.js";
import { renderBlock } from "../markdown.js";

const openCurations = new Set(); // models whose Curate panel the reader opened: it stays open across re-renders

/** Elements that load themselves, ``{notes, panel}``: the draft banner and the hold note (shown at once), and the
 * Curate panel —
 * collapsed until opened (the content section already shows the blocks; the panel loads them for editing only
 * then), and kept open across the re-render that follows a change. ``done(message)`` re-renders the view after a
 * change with ``message`` as its status. */
export function curationSlot(base, model, done) {
  const notes = h("div.curation-notes");
  const body = h("div.curate-body");
  const panel = h("details.panel.curate", { dataset: { model: model.id } },
    h("summary", {}, h("h2#curate-title", {}, "Curate"),
      h("span.muted", {}, " — edit, add, pin or remove blocks by hand (refreshes keep them)")),
    body);
  let loaded = false;
  const open = () => {
    openCurations.add(model.id);
    if (loaded) return;
    loaded = true;
    get(`${base}/blocks`).then((view) => body.replaceChildren(blocksSection(base, view, done)))
      .catch((err) => body.replaceChildren(h("p.error", { role: "alert" }, `Curation: ${err.message}`)));
  };
  panel.addEventListener("toggle", () => { if (panel.open) open(); else openCurations.delete(model.id); });
  if (openCurations.has(model.id)) { panel.open = true; open(); }
  loadNotes(notes, base, model, done).catch((err) => notes.replaceChildren(h("p.error", { role: "alert" }, `Curation: ${err.message}`)));
  return { notes, panel };
}

async function loadNotes(notes, base, model, done) {
  const draft = model.refresh_status && model.refresh_status.draft ? await get(`${base}/draft`) : null;
  // replaceChildren writes a null as the text "null": an absent part is an empty string
  notes.replaceChildren(draft ? draftBanner(base, draft, done) : "", holdNote(model) || "");
}

/** Why automatic refreshes wait (API ``refresh_status.hold``), in words; null when they do not. */
function holdNote(model) {
  const hold = model.refresh_status && model.refresh_status.hold;
  if (!hold) return null;
  const words = {
    reverted: "Reverted: automatic refreshes wait for a new memory in scope, and the next one edits this version (delta).",
    draft: "A draft waits for review: automatic refreshes wait for a memory newer than the draft's.",
    rejected: "Draft rejected: automatic refreshes wait for a memory newer than the rejected draft's.",
  };
  return h("p.hold", { role: "note", dataset: { hold: hold.reason } }, words[hold.reason] || `Automatic refreshes wait (${hold.reason}).`);
}

function draftBanner(base, draft, done) {
  const status = h("p.status", { role: "status" });
  const act = (label, call) => async () => {
    try { await call(); done(label); } catch (err) { status.textContent = `${label} failed: ${err.message}`; }
  };
  const reject = async () => {
    const reason = h("textarea", { rows: 3, name: "reason" });
    const rejected = await modal("Reject the draft?", [h("p", {}, "The published content stays as it is."), field("Reason (kept in history)", reason)],
      { submit: "Reject draft", danger: true, onSubmit: () => post(`${base}/draft/reject`, { draft_id: draft.draft_id, reason: reason.value || null }) });
    if (rejected) done("Draft rejected: the published content is unchanged.");
  };
  return h("section.panel.draft", { "aria-labelledby": "draft-title", dataset: { draft: draft.draft_id } },
    h("div.panel-head", {}, h("h2#draft-title", {}, "A refresh is waiting for review"), h("span.spacer"),
      h("button.primary", { type: "button", on: { click: act("Draft approved and published.", () => post(`${base}/draft/approve`, { draft_id: draft.draft_id })) } }, "Approve"),
      h("button.danger", { type: "button", on: { click: reject } }, "Reject")),
    h("p.muted", {}, `Written ${stamp(draft.created_at)} (${draft.effective_mode} refresh). Nothing is published until you approve it.`),
    renderUnified(draft.diff, "Draft diff (published → draft)"), status);
}

function origin(block) {
  if (block.origin === "person") return `Written by ${block.author || "a person"} at ${stamp(block.edited_at)}: kept by every refresh`;
  return block.pinned ? "Written by a refresh; pinned: kept by every refresh" : "Written by a refresh";
}

function blocksSection(base, view, done) {
  const status = h("p.status", { role: "status", "aria-live": "polite" });
  const fail = (what) => (err) => { status.textContent = `${what} failed: ${err.message}`; };
  const editor = (initial, save, label) => {
    const area = h("textarea", { rows: 4, "aria-label": label, value: initial });
    const box = h("div.block-editor", {}, area,
      h("div.actions", {},
        h("button.primary", { type: "button", on: { click: () => save(area.value).catch(fail(label)) } }, "Save"),
        h("button", { type: "button", on: { click: () => done(null) } }, "Cancel")));
    setTimeout(() => area.focus(), 0);
    return box;
  };
  const sections = view.sections.map((section) => {
    const pinSection = h("button.small", { type: "button", on: { click: () => patch(`${base}/sections/${encodeURIComponent(section.id)}`, { pinned: !section.pinned })
      .then(() => done(`Section “${section.heading || "preamble"}” ${section.pinned ? "unpinned" : "pinned"}.`), fail("Pin")) } },
    section.pinned ? "Unpin section" : "Pin section");
    const list = h("div.cblocks");
    for (const block of section.blocks) {
      const body = h("div.cblock-text", {}, renderBlock(block.text, () => null));
      const row = h("div.cblock", { title: origin(block), dataset: { block: block.id, origin: block.origin || "refresh" } },
        body,
        h("div.cblock-meta", {},
          block.origin === "person" ? badge("edited", "info", origin(block)) : null,
          block.pinned ? badge("pinned", "info") : null,
          h("button.small", { type: "button", "aria-label": `Edit block ${block.id}`, on: { click: () => {
            body.replaceChildren(editor(block.text, (text) => patch(`${base}/blocks/${encodeURIComponent(block.id)}`, { text })
              .then(() => done("Block saved: refreshes keep it as you wrote it.")), `Text of block ${block.id}`));
          } } }, "Edit"),
          h("button.small", { type: "button", "aria-label": `${block.pinned ? "Unpin" : "Pin"} block ${block.id}`, on: { click: () =>
            patch(`${base}/blocks/${encodeURIComponent(block.id)}`, { pinned: !block.pinned })
              .then(() => done(`Block ${block.pinned ? "unpinned" : "pinned"}.`), fail("Pin")) } }, block.pinned ? "Unpin" : "Pin"),
          h("button.small", { type: "button", "aria-label": `Remove block ${block.id}`, on: { click: () =>
            del(`${base}/blocks/${encodeURIComponent(block.id)}`).then(() => done("Block removed."), fail("Remove")) } }, "Remove")));
      list.append(row);
    }
    const add = h("button.small", { type: "button", on: { click: () => {
      add.replaceWith(editor("", (text) => post(`${base}/blocks`, { section_id: section.id, text })
        .then(() => done("Block added: refreshes keep it.")), `New block in ${section.heading || "preamble"}`));
    } } }, "Add block");
    return h("div.csection", { dataset: { section: section.id }, title: section.pinned ? "Pinned: refreshes keep this section whole" : null },
      h("div.csection-head", {}, h("h3", {}, section.heading || "(preamble)"), section.pinned ? badge("pinned", "info") : null, pinSection),
      list, add);
  });
  return h("div", {},
    h("p.muted", {}, `Edited and pinned blocks are kept by every refresh (${view.fixed_block_ids.length} now); `
      + `${view.document_tokens} of ${view.max_tokens} tokens. Hover a block to see who wrote it.`),
    view.sections.length ? sections : h("p.muted", {}, "No blocks yet."), status);
}
