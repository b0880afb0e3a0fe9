// A bank's embedding model on its page: the model its vectors were made with, and when the server embeds with
// another one, a button that starts the re-embedding (POST /reembed) and its progress (memories embedded of all)
// until the switch commits. Recall keeps answering from the old vectors meanwhile.

import { bankPath, follow, get, post } from "../api.js";
import { badge, h } from "../dom.js";

const modelWords = (name, dimension) => `${name} (${dimension} dimensions)`;

/** The progress words of a re-embedding operation. */
function progressWords(op, target) {
  const p = op.progress;
  if (op.status === "pending" && !p) return `Re-embedding to ${target}: queued`;
  if (!p) return `Re-embedding to ${target}…`;
  return `Re-embedding to ${target}: ${p.processed} of ${p.total} memories`;
}

/** The embedding line of the bank page; ``reload()`` redraws the bank page after a switch. */
export async function embeddingLine(bank, reload) {
  const status = await get(`${bankPath(bank)}/embedding-model`);
  const target = status.server_model;
  const line = h("p.stats.embedding", { dataset: { embedding: status.matches ? "matches" : "differs" } },
    "Embedding model: ", status.model ? modelWords(status.model, status.dimension) : "none yet");
  const state = h("span", { role: "status" });
  const watch = async (operationId) => {
    const op = await follow(bank, operationId, (o) => { state.replaceChildren(badge(progressWords(o, target), "info")); }, 500);
    state.replaceChildren(op.status === "completed"
      ? badge(`Re-embedded with ${target}`, "ok")
      : badge(`Re-embedding ${op.status}: ${op.error_message || ""}`, "bad"));
    reload();
  };
  if (status.reembed_operation_id) {
    const op = await get(`${bankPath(bank)}/operations/${encodeURIComponent(status.reembed_operation_id)}`);
    state.replaceChildren(badge(progressWords(op, target), "info"));
    line.append(" · ", state);
  } else if (!status.matches) {
    const button = h("button", { type: "button", on: { click: async () => {
      button.disabled = true;
      state.replaceChildren(badge(`Re-embedding to ${target}: queuing…`, "info"));
      try {
        const started = await post(`${bankPath(bank)}/reembed`);
        await watch(started.operation_id);
      } catch (err) { state.replaceChildren(badge(`Re-embedding failed: ${err.message}`, "bad")); button.disabled = false; }
    } } }, `Re-embed with ${target}`);
    line.append(" · the server embeds with ", modelWords(target, status.server_dimension), " ",
      status.serves_bank
        ? badge("Recall answers from the bank's vectors until the switch", "warn")
        : badge("Recall and retain refused until re-embedded", "bad", `This server cannot make ${status.model}'s vectors`),
      " ", button, " ", state);
  }
  return line;
}
