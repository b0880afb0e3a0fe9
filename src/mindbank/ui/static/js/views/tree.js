// The knowledge-base tree of a bank: folders and pages (a page is a mental model), each page with the staleness
// flag the API computed (is_stale), and the actions on nodes: create a folder or page, rename, move, delete.

import { bankPath, del, get, patch, post } from "../api.js";
import { append, badge, field, h, modal, staleBadge, when } from "../dom.js";

/** Pages and folders under a node (itself excluded). */
export function countBelow(node) {
  let pages = 0;
  let folders = 0;
  for (const child of node.children || []) {
    if (child.kind === "page") pages += 1;
    else folders += 1;
    const sub = countBelow(child);
    pages += sub.pages;
    folders += sub.folders;
  }
  return { pages, folders };
}

function folders(nodes, skip = null, depth = 0, out = []) {
  for (const node of nodes) {
    if (node.kind !== "folder" || node.id === skip) continue;
    out.push({ node, depth });
    folders(node.children || [], skip, depth + 1, out);
  }
  return out;
}

async function askName(title, label, initial, submit, save) {
  const input = h("input", { type: "text", required: true, maxlength: 256, value: initial || "" });
  return modal(title, field(label, input), { submit, onSubmit: () => save(input.value.trim()) });
}

/** The tree panel; ``extra`` (an element, e.g. the page search) goes under its heading. */
export async function treePanel(bank, ctx, reload, extra = null) {
  const base = `${bankPath(bank)}/knowledge-base`;
  const tree = await get(`${base}/tree`);
  const section = h("section.panel", { "aria-labelledby": "kb-title" });
  const newFolder = (parent) => askName(parent ? `New folder in “${parent.name}”` : "New folder", "Folder name", "", "Create folder",
    (name) => post(`${base}/folders`, { name, parent_id: parent ? parent.id : null })).then((r) => r && reload());
  const newPage = (parent) => ctx.navigate(`#/b/${encodeURIComponent(bank)}/new?kind=page${parent ? `&parent=${encodeURIComponent(parent.id)}` : ""}`);

  const rename = (node) => askName(`Rename ${node.kind} “${node.name}”`, "New name", node.name, "Rename",
    (name) => patch(`${base}/nodes/${encodeURIComponent(node.id)}`, { name })).then((r) => r && reload());

  const move = (node) => {
    const select = h("select", {},
      h("option", { value: "" }, "(top level)"),
      folders(tree.roots, node.id).map(({ node: f, depth }) => h("option", { value: f.id, selected: f.id === node.parent_id }, `${"— ".repeat(depth)}${f.name}`)));
    return modal(`Move ${node.kind} “${node.name}”`, field("Move to folder", select), {
      submit: "Move",
      onSubmit: () => patch(`${base}/nodes/${encodeURIComponent(node.id)}`, { parent_id: select.value || null }),
    }).then((r) => r && reload());
  };

  const remove = (node) => {
    const { pages, folders: subfolders } = countBelow(node);
    const body = node.kind === "folder"
      ? h("p", {}, `Delete the folder “${node.name}” and everything in it: `, h("strong", {}, `${pages} page(s)`),
        ` (each a mental model, with its history) and ${subfolders} folder(s). This cannot be undone.`)
      : h("p", {}, `Delete the page “${node.name}” and its mental model, with its history. This cannot be undone.`);
    return modal(`Delete ${node.kind}?`, body, {
      submit: node.kind === "folder" ? `Delete folder and ${pages} page(s)` : "Delete page",
      danger: true,
      onSubmit: () => del(`${base}/nodes/${encodeURIComponent(node.id)}`),
    }).then((r) => r && reload());
  };

  const actions = (node) => h("span.node-actions", {},
    node.kind === "folder" ? [
      h("button.small", { type: "button", "aria-label": `New page in folder ${node.name}`, on: { click: () => newPage(node) } }, "+ page"),
      h("button.small", { type: "button", "aria-label": `New folder in folder ${node.name}`, on: { click: () => newFolder(node) } }, "+ folder"),
    ] : null,
    h("button.small", { type: "button", "aria-label": `Rename ${node.kind} ${node.name}`, on: { click: () => rename(node) } }, "Rename"),
    h("button.small", { type: "button", "aria-label": `Move ${node.kind} ${node.name}`, on: { click: () => move(node) } }, "Move"),
    h("button.small.danger", { type: "button", "aria-label": `Delete ${node.kind} ${node.name}`, on: { click: () => remove(node) } }, "Delete"),
  );

  const item = (node) => {
    if (node.kind === "folder") {
      const { pages } = countBelow(node);
      return h("li.folder", { dataset: { node: node.id } },
        h("div.node", {}, h("span.icon", { "aria-hidden": "true" }, "▸"), h("span.name", { title: node.name }, node.name),
          h("span.muted", {}, `${pages} page${pages === 1 ? "" : "s"}`), actions(node)),
        node.children.length ? h("ul", {}, node.children.map(item)) : h("p.muted.empty", {}, "Empty folder"));
    }
    return h("li.page", { dataset: { node: node.id } },
      h("div.node", {},
        h("span.icon", { "aria-hidden": "true" }, "▪"),
        h("a.name", { href: `#/b/${encodeURIComponent(bank)}/m/${encodeURIComponent(node.mental_model_id)}`, title: node.name }, node.name),
        staleBadge(node),
        node.last_refresh_failed_at ? badge("Refresh failed", "bad", `last refresh failed at ${node.last_refresh_failed_at}`) : null,
        actions(node)),
      h("p.node-sub", {}, "refreshed ", when(node.timestamp), node.tags.length ? ` · ${node.tags.join(", ")}` : ""));
  };

  append(section, [
    h("div.panel-head", {},
      h("h2#kb-title", {}, "Knowledge base"),
      h("span.spacer"),
      h("button", { type: "button", on: { click: () => newFolder(null) } }, "New folder"),
      h("button", { type: "button", on: { click: () => newPage(null) } }, "New page")),
    extra,
    tree.roots.length ? h("ul.tree", { "aria-label": "Knowledge base tree" }, tree.roots.map(item))
      : h("p.muted", {}, "No folders or pages yet. A page is a mental model kept in the tree; create a folder to start."),
  ]);
  return section;
}
