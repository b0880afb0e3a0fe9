// The public HTTP API, called from the browser: every view's data comes from here. With MINDBANK_API_KEY set the
// server answers 401 until the key is sent; the key the person types is kept for this browser session only.

const KEY = "mindbank.apiKey";
let askForKey = null; // set by the app: (rejected) => Promise<string|null>
let asking = null; // the prompt on screen: requests failing meanwhile wait for the same answer

export class ApiError extends Error {
  constructor(status, detail) {
    super(ApiError.message(status, detail));
    this.status = status;
    this.detail = detail;
  }

  static message(status, detail) {
    if (Array.isArray(detail)) {
      return detail.map((d) => `${(d.loc || []).filter((p) => p !== "body" && p !== "query").join(".")}: ${d.msg}`).join("; ");
    }
    return typeof detail === "string" ? detail : `HTTP ${status}`;
  }
}

export function onKeyNeeded(fn) { askForKey = fn; }
export function apiKey() { return sessionStorage.getItem(KEY) || ""; }
export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

export const bankPath = (bank) => `/v1/default/banks/${encodeURIComponent(bank)}`;

/** One prompt at a time, however many requests were refused together. */
function promptForKey(rejected) {
  if (!asking) asking = askForKey(rejected).finally(() => { asking = null; });
  return asking;
}

/** fetch a JSON answer; query values that are arrays repeat the parameter. A 401 asks for the key (again, while the
 * server refuses the one typed) and retries; cancelling the prompt gives up with the 401. */
export async function api(method, path, { query = null, body = undefined } = {}) {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(query || {})) {
    if (value === null || value === undefined || value === "") continue;
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, String(v));
  }
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const key = apiKey();
  if (key) headers.authorization = `Bearer ${key}`;
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 401 && askForKey) {
    // a newer key may have been typed while this request was in flight: try that one before asking
    const typed = apiKey() !== key ? apiKey() : await promptForKey(Boolean(key));
    if (typed) return api(method, path, { query, body });
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!response.ok) throw new ApiError(response.status, data && typeof data === "object" ? data.detail : data);
  return data;
}

export const get = (path, query) => api("GET", path, { query });
export const post = (path, body) => api("POST", path, { body });
export const patch = (path, body) => api("PATCH", path, { body });
export const del = (path) => api("DELETE", path);

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** Poll an operation until it finishes; onUpdate(op) on every answer. Resolves with the final operation. */
export async function follow(bank, operationId, onUpdate = () => {}, intervalMs = 300) {
  for (;;) {
    const op = await get(`${bankPath(bank)}/operations/${encodeURIComponent(operationId)}`);
    onUpdate(op);
    if (TERMINAL.has(op.status)) return op;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
