// The control plane: a hash-routed single page over the public HTTP API (nothing here reads the database; the
// server only serves these files). Views: banks, a bank (knowledge-base tree and mental models), a model, the
// model/page form, operations, memories (list, search, one memory) and documents.

import { ApiError, apiKey, onKeyNeeded, setApiKey } from "./api.js";
import { clear, field, h, modal, zoneName } from "./dom.js";
import { bankView } from "./views/bank.js";
import { banksView } from "./views/banks.js";
import { documentsView, documentView } from "./views/documents.js";
import { formView } from "./views/form.js";
import { memoriesView, memoryView } from "./views/memories.js";
import { modelView } from "./views/model.js";
import { operationsView } from "./views/operations.js";

const ROUTES = [
  [/^\/?$/, banksView],
  [/^\/b\/([^/]+)$/, bankView],
  [/^\/b\/([^/]+)\/ops$/, operationsView],
  [/^\/b\/([^/]+)\/new$/, formView],
  [/^\/b\/([^/]+)\/m\/([^/]+)$/, modelView],
  [/^\/b\/([^/]+)\/m\/([^/]+)\/edit$/, formView],
  [/^\/b\/([^/]+)\/mem$/, memoriesView],
  [/^\/b\/([^/]+)\/mem\/([^/]+)$/, memoryView],
  [/^\/b\/([^/]+)\/docs$/, documentsView],
  [/^\/b\/([^/]+)\/docs\/([^/]+)$/, documentView],
];

/** Breadcrumbs from the path alone, shown until the view sets its own (and kept when it fails, e.g. a 404). */
function pathCrumbs(path) {
  const bank = path.match(/^\/b\/([^/]+)/);
  if (!bank) return [["Banks", path === "/" ? null : "#/"]];
  const name = decodeURIComponent(bank[1]);
  return [["Banks", "#/"], [name, path === `/b/${bank[1]}` ? null : `#/b/${bank[1]}`]];
}

let cleanups = [];
let renderCount = 0;

/** Ask for the API key (after a 401). Resolves with the key typed, or null. */
function askKey(rejected) {
  const input = h("input", { type: "password", autocomplete: "current-password", required: true });
  return modal(
    "API key required",
    [
      h("p", {}, rejected ? "The server did not accept that key. Enter another one." : "This server requires an API key (the admin key or a scoped key)."),
      field("API key", input, "Kept in this browser tab only; sent as Authorization: Bearer <key>."),
    ],
    { submit: "Use this key", onSubmit: () => { setApiKey(input.value.trim()); return input.value.trim(); } },
  );
}

function setCrumbs(items) {
  const nav = clear(document.getElementById("crumbs"));
  const list = h("ol");
  items.forEach(([label, href], i) => {
    const last = i === items.length - 1;
    list.append(h("li", {}, last || !href ? h("span", { "aria-current": last ? "page" : null }, label) : h("a", { href }, label)));
  });
  nav.append(list);
}

export function navigate(hash) {
  if (window.location.hash === hash) render();
  else window.location.hash = hash;
}

async function render() {
  for (const fn of cleanups) fn();
  cleanups = [];
  const token = ++renderCount;
  const main = document.getElementById("main");
  const [path, queryString = ""] = (window.location.hash.replace(/^#/, "") || "/").split("?");
  const query = new URLSearchParams(queryString);
  const route = ROUTES.find(([pattern]) => pattern.test(path));
  setCrumbs(pathCrumbs(path));
  if (!route) {
    main.replaceChildren(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the banks")));
    return;
  }
  const params = path.match(route[0]).slice(1).map(decodeURIComponent);
  const ctx = {
    setCrumbs,
    navigate,
    onLeave: (fn) => cleanups.push(fn),
    current: () => token === renderCount,
    rerender: render,
  };
  // the view is built off-screen and shown only if no newer render started meanwhile (a poll's re-render and a
  // navigation can overlap: only the newest may reach the page)
  const view = h("div.view");
  try {
    await route[1](view, params, query, ctx);
  } catch (err) {
    if (token !== renderCount) return;
    if (err instanceof ApiError && err.status === 404) {
      clear(view).append(h("h1", {}, "Not found"), h("p.error", { role: "alert" }, err.message),
        h("p", {}, h("a", { href: pathCrumbs(path).at(-1)[1] || "#/" }, "Back")));
    } else {
      clear(view).append(
        h("h1", {}, "Something went wrong"),
        h("p.error", { role: "alert" }, err instanceof ApiError ? `${err.message} (HTTP ${err.status})` : String(err)),
        h("button", { type: "button", on: { click: render } }, "Try again"),
      );
    }
  }
  if (token === renderCount) {
    main.replaceChildren(view);
    view.querySelector("[autofocus]")?.focus(); // a view built off-screen asks for focus this way
    document.title = `${main.querySelector("h1")?.textContent || "mindbank"} · mindbank`;
  }
}

onKeyNeeded(askKey);
document.getElementById("key-button").before(h("span.zone", { title: "Every time on these pages is in this zone; hover one for UTC" }, `Times: ${zoneName()}`));
document.getElementById("key-button").addEventListener("click", async () => {
  const had = Boolean(apiKey());
  const input = h("input", { type: "password", autocomplete: "current-password" });
  const result = await modal("API key", [
    h("p", {}, had ? "A key is set for this tab. Enter a new one, or leave empty to forget it." : "No key is set. Servers started with MINDBANK_API_KEY need one."),
    field("API key", input),
  ], { submit: "Save", onSubmit: () => ({ key: input.value.trim() }) });
  if (result) { setApiKey(result.key); render(); }
});
window.addEventListener("hashchange", render);
render();
