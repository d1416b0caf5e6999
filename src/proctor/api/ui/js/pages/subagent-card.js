// A sub-agent run as its parent shows it (seed 004): type, task given, status, duration,
// tool calls, final summary and its own findings. Once it has finished the card starts
// "digested" — one line — and expands in place; a link opens the sub-agent's own trace.

import { h, replace } from "../dom.js";
import { renderMarkdown } from "../markdown.js";
import { formatDuration, formatCount, statusLabel } from "./trace-format.js";

const DIGEST_CHARS = 80;

/**
 * @param {any} card the API's SubagentCardOut
 * @returns {HTMLElement}
 */
export function subagentCard(card) {
  const element = h("article", {
    class: "card subagent-card",
    "aria-label": `Sub-agent ${card.agent_type ?? ""}: ${card.description ?? card.title ?? card.conversation_id}`.replace(/\s+/g, " "),
    dataset: { subagent: card.conversation_id },
  });
  let expanded = !card.finished;
  const draw = () => {
    element.classList.toggle("digested", !expanded);
    replace(element, header(card, expanded, () => { expanded = !expanded; draw(); toggleFocus(element); }),
      expanded ? details(card) : digest(card));
  };
  draw();
  return element;
}

function toggleFocus(element) {
  /** @type {HTMLElement | null} */ (element.querySelector("button.subagent-toggle"))?.focus();
}

function header(card, expanded, toggle) {
  const status = statusLabel(card.status ?? card.stop_kind ?? (card.finished ? "completed" : "running"));
  return h("div", { class: "row spread subagent-head" },
    h("span", { class: "row" },
      h("span", { class: "subagent-type" }, `Sub-agent · ${card.agent_type ?? "agent"}`),
      h("span", { class: `badge status-${status.tone}` }, h("span", { "aria-hidden": "true" }, status.icon), ` ${status.text}`),
      h("span", { class: "muted" }, [
        formatDuration(card.duration_ms),
        `${formatCount(card.tool_calls || card.tool_uses)} tool call${(card.tool_calls || card.tool_uses) === 1 ? "" : "s"}`,
        `${formatCount(card.findings)} finding${card.findings === 1 ? "" : "s"}`,
      ].filter(Boolean).join(" · "))),
    h("span", { class: "row" },
      h("button", { type: "button", class: "subagent-toggle", "aria-expanded": String(expanded), on: { click: toggle } },
        expanded ? "Digest" : "Expand"),
      h("a", { href: `#/conversations/${encodeURIComponent(card.conversation_id)}`, class: "subagent-open" }, "Open sub-agent trace")));
}

function digest(card) {
  const summary = (card.summary ?? "").replace(/\s+/g, " ").trim();
  return h("p", { class: "subagent-digest muted" },
    card.finished ? h("span", null, h("span", { "aria-hidden": "true" }, "✓ "), "digested · ") : null,
    card.description ? `${card.description} — ` : "",
    summary ? (summary.length > DIGEST_CHARS ? `${summary.slice(0, DIGEST_CHARS)}…` : summary) : "no summary");
}

function details(card) {
  const facts = [
    ["Task given", card.description ?? "—"],
    ["Status", [card.status, card.stop_kind && card.stop_kind !== card.status ? `stopped: ${card.stop_kind}` : null].filter(Boolean).join(" · ") || "unknown"],
    ["Duration", formatDuration(card.duration_ms) || "unknown"],
    ["Tool calls", `${formatCount(card.tool_calls)} stored` + (card.tool_uses && card.tool_uses !== card.tool_calls ? ` (${formatCount(card.tool_uses)} reported)` : "")],
    ["Rounds", formatCount(card.rounds)],
    ["Tokens", formatCount(card.total_tokens)],
    ["Findings", `${formatCount(card.findings)} (${formatCount(card.open_findings)} open)`],
  ];
  return h("div", { class: "subagent-details" },
    h("dl", { class: "facts" }, facts.flatMap(([term, value]) => [h("dt", null, term), h("dd", null, value)])),
    h("div", { class: "subagent-summary" },
      h("p", { class: "muted" }, "Final summary"),
      card.summary ? renderMarkdown(card.summary) : h("p", { class: "muted" }, "The run left no summary.")));
}
