// The trace as a tree (WAI-ARIA tree pattern): turns → messages and tool calls → sub-agent
// cards. Each row carries a waterfall bar (start offset and duration against the whole
// trace), status as icon + words, model and tokens, and a marker per finding that cites it.
// Keyboard: ↑/↓ move, → opens or goes to the first child, ← closes or goes to the parent,
// Home/End, Enter/Space open or close; controls inside a row keep their own keys.

import { h, scrollable, timeEl } from "../dom.js";
import { jsonView, parseStructured } from "../json-view.js";
import { renderMarkdown } from "../markdown.js";
import { subagentCard } from "./subagent-card.js";
import { formatCount, formatDuration, statusLabel, tokenText } from "./trace-format.js";

/** Characters of a long output shown before "Show all N characters". */
export const FOLD = 2000;

export function itemDomId(sourceId) {
  return `turn-${sourceId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

let labelSeq = 0;
function labelId() {
  labelSeq += 1;
  return `trace-label-${labelSeq}`;
}

/**
 * The rows of one window: a treeitem per turn it touches, holding that turn's items.
 * @param {any} page the API's TranscriptPage
 * @param {{ onMarker: (findingId: string) => void }} actions
 */
export function treeRows(page, actions) {
  const heads = new Map(page.turns.map((head) => [head.turn, head]));
  const rows = [];
  let group = null;
  let current = null;
  for (const item of page.items) {
    if (current !== item.turn) {
      current = item.turn;
      const head = heads.get(item.turn);
      const continued = head ? head.index < item.index : false;
      const row = turnRow(head ?? { turn: item.turn, items: 0 }, page, continued);
      rows.push(row);
      group = row.querySelector(":scope > ul[role=group]");
    }
    group.appendChild(itemRow(item, page, actions));
  }
  return rows;
}

function waterfall(offset, duration, page, label) {
  const span = page.span_ms || 0;
  const bar = h("span", { class: "bar" });
  const track = h("span", { class: "waterfall", "aria-hidden": "true", title: label });
  if (span > 0 && offset !== null && offset !== undefined) {
    bar.style.setProperty("--at", `${Math.min(100, (offset / span) * 100).toFixed(3)}%`);
    bar.style.setProperty("--len", `${Math.max(0.4, Math.min(100, ((duration ?? 0) / span) * 100)).toFixed(3)}%`);
    track.appendChild(bar);
  }
  return track;
}

function timing(offset, duration) {
  const parts = [];
  if (offset !== null && offset !== undefined) parts.push(`starts +${formatDuration(offset) || "0 ms"}`);
  if (duration !== null && duration !== undefined) parts.push(`lasts ${formatDuration(duration)}`);
  return parts.join(", ");
}

function turnRow(head, page, continued) {
  const id = labelId();
  const title = head.turn === 0 ? "Before the first prompt" : `Turn ${head.turn}`;
  const facts = [
    head.items ? `${formatCount(head.items)} items` : null,
    head.tool_calls ? `${formatCount(head.tool_calls)} tool calls` : null,
    head.subagents ? `${head.subagents} sub-agent${head.subagents === 1 ? "" : "s"}` : null,
    head.tokens ? `${formatCount(head.tokens)} tokens` : null,
    formatDuration(head.duration_ms) || null,
  ].filter(Boolean).join(" · ");
  return h("li", {
    role: "treeitem", class: "trace-turn", "aria-expanded": "true", tabindex: "-1",
    dataset: { turn: String(head.turn) },
  },
    h("div", { class: "trace-line" },
      h("span", { class: "toggle", "aria-hidden": "true" }),
      h("span", { class: "trace-label", id },
        h("strong", null, title),
        continued ? h("span", { class: "muted" }, " (continued)") : null,
        head.prompt ? h("span", { class: "prompt-excerpt" }, ` — ${head.prompt.replace(/\s+/g, " ").slice(0, 90)}`) : null),
      h("span", { class: "trace-meta" },
        head.failed ? h("span", { class: "status failed" }, h("span", { "aria-hidden": "true" }, "✗ "), `${head.failed} failed`) : null,
        head.findings ? h("span", { class: "finding-count" }, h("span", { "aria-hidden": "true" }, "⚑ "), `${head.findings} finding${head.findings === 1 ? "" : "s"}`) : null,
        facts ? h("span", { class: "muted" }, facts) : null),
      waterfall(head.offset_ms, head.duration_ms, page, timing(head.offset_ms, head.duration_ms))),
    h("ul", { role: "group" }));
}

function itemRow(item, page, actions) {
  const id = labelId();
  const isCall = item.source_type === "tool_call";
  const status = isCall ? statusLabel(item.failed && item.status === "ok" ? "error" : item.status) : null;
  const tokens = tokenText(item.tokens);
  const row = h("li", {
    role: "treeitem", id: itemDomId(item.source_id), class: `trace-item ${isCall ? "call" : `message role-${item.role}`}${item.failed ? " failed" : ""}${item.on_active_branch ? "" : " abandoned"}`,
    tabindex: "-1", dataset: { source: item.source_id, sourceType: item.source_type },
  },
    h("div", { class: "trace-line" },
      h("span", { class: "toggle", "aria-hidden": "true" }),
      h("span", { class: "trace-label", id },
        isCall
          ? [h("span", { class: "kind-icon", "aria-hidden": "true" }, "⚙"), " ", h("span", { class: "tool-name" }, item.name)]
          : [h("span", { class: "kind-icon", "aria-hidden": "true" }, item.role === "user" ? "●" : item.role === "assistant" ? "✦" : "•"), " ",
             h("span", null, `${item.role}${item.kind && item.kind !== "reply" && item.kind !== "prompt" ? ` · ${item.kind}` : ""}`)],
        isCall ? h("span", { class: `status ${status.tone}` }, " ", h("span", { "aria-hidden": "true" }, status.icon), ` ${status.text}${item.exit_code !== null && item.exit_code !== undefined && item.exit_code !== 0 ? ` (exit ${item.exit_code})` : ""}`) : null,
        item.on_active_branch ? null : h("span", { class: "muted" }, " · abandoned branch")),
      h("span", { class: "trace-meta" },
        item.findings.map((mark) => h("button", {
          type: "button", class: `finding-marker sev-${mark.severity}`,
          "aria-label": `${mark.severity} finding cites this: go to it`,
          title: `A ${mark.severity} finding cites this (${mark.status})`,
          dataset: { findingMarker: mark.finding_id },
          on: { click: () => actions.onMarker(mark.finding_id) },
        }, h("span", { "aria-hidden": "true" }, "⚑ "), mark.severity)),
        item.model ? h("span", { class: "model muted" }, item.model) : null,
        tokens ? h("span", { class: "tokens muted", title: tokens.title }, tokens.text) : null,
        item.duration_ms !== null && item.duration_ms !== undefined ? h("span", { class: "duration muted" }, formatDuration(item.duration_ms)) : null,
        h("span", { class: "muted when" }, timeEl(item.occurred_at))),
      waterfall(item.offset_ms, item.duration_ms, page, timing(item.offset_ms, item.duration_ms))),
    h("div", { class: "trace-body" }, isCall ? callBody(item) : messageBody(item)));
  if (item.subagent) {
    row.setAttribute("aria-expanded", "true");
    row.appendChild(h("ul", { role: "group" },
      h("li", { role: "treeitem", class: "trace-subagent", tabindex: "-1" },
        subagentCard(item.subagent))));
  }
  return row;
}

/** A message: its Markdown rendered, with a toggle to its raw source (where marks go). */
function messageBody(item) {
  const text = item.text ?? "";
  if (!text) return null;  // a reply that only issues calls: its row says enough
  const rendered = renderMarkdown(text);
  const source = scrollable(h("pre", { class: "source", dataset: { field: "text" }, hidden: true }, text), "Message source");
  const toggle = h("button", { type: "button", class: "link-button source-toggle", "aria-pressed": "false",
    on: { click: () => showSource(toggle, rendered, source, source.hidden) } }, "Source");
  return [h("div", { class: "row body-tools" }, toggle), rendered, source];
}

/** Show the raw view (true) or the rendered one (false) of a body that has both. */
export function showSource(toggle, rendered, source, raw) {
  source.hidden = !raw;
  rendered.hidden = raw;
  toggle.setAttribute("aria-pressed", String(raw));
}

function callBody(item) {
  const parts = [];
  const args = item.arguments;
  if (args && typeof args === "object" && !Array.isArray(args)) {
    const entries = Object.entries(args);
    if (entries.length) {
      parts.push(h("dl", { class: "args" }, entries.flatMap(([key, value]) => [
        h("dt", { class: "mono" }, key),
        h("dd", null, typeof value === "string"
          ? folded(`arguments.${key}`, value)
          : h("div", { dataset: { field: `arguments.${key}` } }, jsonView(value))),
      ])));
    }
  } else if (args !== null && args !== undefined) {
    parts.push(h("div", { dataset: { field: "arguments" } }, jsonView(args, { label: "arguments" })));
  }
  if (item.result_text) {
    const structured = parseStructured(item.result_text);
    const size = item.result_size ?? item.result_text.length;
    const raw = folded("result_text", item.result_text);
    const label = `Result (${formatCount(size)} characters${item.result_size ? ", stored cut" : ""})`;
    if (structured !== undefined) {
      const view = jsonView(structured);
      raw.hidden = true;
      const toggle = h("button", { type: "button", class: "link-button source-toggle", "aria-pressed": "false",
        on: { click: () => showSource(toggle, view, raw, raw.hidden) } }, "Source");
      parts.push(h("details", { class: "result", open: true }, h("summary", null, label), h("div", { class: "row body-tools" }, toggle), view, raw));
    } else {
      parts.push(h("details", { class: "result", open: item.result_text.length <= FOLD || item.failed }, h("summary", null, label), raw));
    }
  }
  return parts;
}

/** What a raw text block holds, said when it takes focus (a scrollable block is a tab stop). */
function fieldLabel(field) {
  if (field === "result_text") return "Tool result";
  if (field.startsWith("arguments.")) return `Argument ${field.slice("arguments.".length)}`;
  return field === "arguments" ? "Arguments" : "Text";
}

/** Raw text in a <pre data-field>, folded past FOLD characters with a "Show all" button. */
function folded(field, text) {
  const pre = scrollable(h("pre", { class: "mono", dataset: { field } }), fieldLabel(field));
  const wrap = h("div", { class: "folded" }, pre);
  if (text.length <= FOLD) {
    pre.textContent = text;
    return wrap;
  }
  pre.textContent = text.slice(0, FOLD);
  pre.dataset.folded = "true";
  const more = h("button", { type: "button", class: "link-button unfold", on: { click: () => unfold(pre, text, more) } },
    `Show all ${formatCount(text.length)} characters`);
  /** @type {any} */ (pre).fullText = text;
  wrap.appendChild(more);
  return wrap;
}

function unfold(pre, text, button) {
  pre.textContent = text;
  delete pre.dataset.folded;
  button.remove();
}

/** Show all of a folded field (before marking characters past the fold). */
export function unfoldField(pre) {
  if (pre.dataset.folded !== "true") return;
  const button = pre.parentElement?.querySelector(":scope > button.unfold");
  unfold(pre, /** @type {any} */ (pre).fullText ?? pre.textContent, button ?? { remove() {} });
}

// -- keyboard ------------------------------------------------------------------------

function visibleItems(tree) {
  return [...tree.querySelectorAll("[role=treeitem]")].filter((item) => !item.parentElement?.closest("[role=group][hidden]"));
}

/** Open or close a treeitem that has a group. */
export function setExpanded(item, open) {
  if (!item.hasAttribute("aria-expanded")) return;
  item.setAttribute("aria-expanded", String(open));
  const group = item.querySelector(":scope > [role=group]");
  if (group) group.hidden = !open;
}

/** Make `item` the tree's one tabbable row and focus it. */
export function focusItem(tree, item, options = {}) {
  for (const other of tree.querySelectorAll("[role=treeitem][tabindex='0']")) other.setAttribute("tabindex", "-1");
  item.setAttribute("tabindex", "0");
  item.focus(options);
}

/** Wire the tree's keys and clicks; call once per tree element. */
export function wireTree(tree) {
  tree.addEventListener("keydown", (event) => {
    const item = /** @type {HTMLElement} */ (event.target);
    if (item.getAttribute?.("role") !== "treeitem") return;
    const items = visibleItems(tree);
    const at = items.indexOf(item);
    const expanded = item.getAttribute("aria-expanded");
    let next = null;
    switch (event.key) {
      case "ArrowDown": next = items[at + 1]; break;
      case "ArrowUp": next = items[at - 1]; break;
      case "Home": next = items[0]; break;
      case "End": next = items[items.length - 1]; break;
      case "ArrowRight":
        if (expanded === "false") setExpanded(item, true);
        else if (expanded === "true") next = item.querySelector(":scope > [role=group] > [role=treeitem]");
        break;
      case "ArrowLeft":
        if (expanded === "true") setExpanded(item, false);
        else next = item.parentElement?.closest("[role=treeitem]");
        break;
      case "Enter":
      case " ":
        if (expanded !== null) setExpanded(item, expanded !== "true");
        break;
      default:
        return;
    }
    event.preventDefault();
    if (next) focusItem(tree, /** @type {HTMLElement} */ (next));
  });
  tree.addEventListener("click", (event) => {
    const target = /** @type {HTMLElement} */ (event.target);
    const toggle = target.closest(".toggle");
    const line = target.closest(".trace-line");
    if (!toggle && !(line && target.closest(".trace-label"))) return;
    const item = /** @type {HTMLElement} */ (line?.parentElement);
    if (item?.getAttribute("role") !== "treeitem") return;
    if (item.hasAttribute("aria-expanded")) setExpanded(item, item.getAttribute("aria-expanded") !== "true");
    focusItem(tree, item, { preventScroll: true });
  });
  tree.addEventListener("focusin", (event) => {
    const item = /** @type {HTMLElement} */ (event.target);
    if (item.getAttribute?.("role") === "treeitem" && item.getAttribute("tabindex") !== "0") {
      for (const other of tree.querySelectorAll("[role=treeitem][tabindex='0']")) other.setAttribute("tabindex", "-1");
      item.setAttribute("tabindex", "0");
    }
  });
}
