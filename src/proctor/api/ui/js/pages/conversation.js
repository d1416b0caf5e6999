// One conversation: its transcript beside its findings stream (SPEC UI-3, SUP-8). Evidence
// links scroll to the cited message or tool call and mark the cited character range.

import { latest, query } from "../api.js";
import { h, replace, timeEl, toast } from "../dom.js";
import { renderFindings } from "./findings-panel.js";

const TURNS = 100;

export async function conversationPage({ main, params: [ref], query: params }) {
  const summary = await latest("conversation", `/conversations/${encodeURIComponent(ref)}`);
  const c = summary.conversation;
  const id = c.conversation_id;
  const transcript = h("section", { class: "transcript", "aria-label": "Transcript" });
  const stream = h("section", { class: "findings", "aria-label": "Findings" });
  replace(main,
    h("h1", null, c.title || id),
    h("p", { class: "muted" },
      `${summary.project} · ${c.format} · ${summary.messages} messages · ${summary.tool_calls} tool calls · `,
      timeEl(c.started_at)),
    h("div", { class: "grid-2" }, transcript, stream),
  );
  const view = new TranscriptView(transcript, id);
  await Promise.all([view.load(params.get("source")), renderFindings(stream, id, view)]);
}

/** The conversation's turns, a page at a time, with a way to show one cited source. */
class TranscriptView {
  constructor(container, conversationId) {
    this.container = container;
    this.conversationId = conversationId;
    this.list = h("ol", { class: "plain", id: "turns" });
    this.more = h("div");
    replace(container, h("h2", null, "Transcript"), this.list, this.more);
    this.offset = 0;
    this.total = 0;
  }

  async load(around) {
    const path = `/conversations/${encodeURIComponent(this.conversationId)}/transcript${query({ limit: TURNS, offset: around ? null : this.offset, around })}`;
    const page = await latest(`transcript:${this.conversationId}`, path);
    replace(this.list, page.items.map(renderTurn));
    this.offset = page.offset;
    this.total = page.total;
    this.renderMore();
    if (around) this.show({ source_id: around });
  }

  renderMore() {
    const end = this.offset + this.list.children.length;
    replace(this.more,
      h("p", { class: "muted" }, `Turns ${this.total ? this.offset + 1 : 0}–${end} of ${this.total}`),
      h("div", { class: "row" },
        this.offset > 0 && h("button", { type: "button", on: { click: () => this.page(Math.max(0, this.offset - TURNS)) } }, "Earlier turns"),
        end < this.total && h("button", { type: "button", on: { click: () => this.page(end) } }, "Later turns")));
  }

  async page(offset) {
    this.offset = offset;
    await this.load(null);
  }

  /** Scroll to the source cited by `evidence`, mark its range, and move focus there. */
  async show(evidence) {
    let turn = document.getElementById(turnId(evidence.source_id));
    if (!turn) {
      await this.load(evidence.source_id);
      turn = document.getElementById(turnId(evidence.source_id));
    }
    if (!turn) {
      toast("That source is not in this conversation's transcript.");
      return;
    }
    for (const old of this.list.querySelectorAll(".highlight")) old.classList.remove("highlight");
    for (const old of this.list.querySelectorAll("mark")) old.replaceWith(document.createTextNode(old.textContent ?? ""));
    turn.classList.add("highlight");
    if (evidence.field && evidence.start != null && evidence.end != null) markRange(turn, evidence.field, evidence.start, evidence.end);
    turn.scrollIntoView({ block: "center" });
    turn.focus({ preventScroll: true });
  }
}

function turnId(sourceId) {
  return `turn-${sourceId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

function renderTurn(item) {
  const field = (name, text, cls) => h("pre", { class: cls ?? null, dataset: { field: name } }, text);
  const body = [];
  let who;
  if (item.source_type === "message") {
    who = `${item.role}${item.kind && item.kind !== "text" ? ` · ${item.kind}` : ""}`;
    body.push(field("text", item.text ?? ""));
  } else {
    const outcome = item.status + (item.exit_code != null ? `, exit ${item.exit_code}` : "");
    who = `tool ${item.name} (${outcome})`;
    const args = item.arguments;
    if (args && typeof args === "object" && !Array.isArray(args)) {
      body.push(h("dl", { class: "args" }, Object.entries(args).flatMap(([key, value]) => [
        h("dt", { class: "mono" }, key),
        h("dd", null, field(`arguments.${key}`, typeof value === "string" ? value : JSON.stringify(value, null, 2), "mono")),
      ])));
    } else if (args !== null && args !== undefined) {
      body.push(field("arguments", JSON.stringify(args, null, 2), "mono"));
    }
    if (item.result_text) body.push(h("details", { open: item.result_text.length < 1500 },
      h("summary", null, `Result (${item.result_text.length} characters)`), field("result_text", item.result_text, "mono")));
  }
  return h("li", { id: turnId(item.source_id), class: "turn", tabindex: "-1", dataset: { source: item.source_id } },
    h("div", { class: "who" }, who, " · ", timeEl(item.occurred_at)),
    body);
}

/** Wrap characters [start, end) of the turn's `field` text in <mark> (text nodes only). */
function markRange(turn, fieldName, start, end) {
  const target = [...turn.querySelectorAll("[data-field]")].find((el) => /** @type {HTMLElement} */ (el).dataset.field === fieldName);
  if (!target) return;
  const details = target.closest("details");
  if (details) details.open = true;
  const text = target.textContent ?? "";
  const from = Math.max(0, Math.min(start, text.length));
  const to = Math.max(from, Math.min(end, text.length));
  replace(target, text.slice(0, from), h("mark", null, text.slice(from, to)), text.slice(to));
}
