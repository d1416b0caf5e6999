// Conversations: the list, and one conversation's transcript beside its findings stream
// (SPEC UI-3, SUP-8). Evidence links scroll to the cited message or tool call and mark
// the cited character range; status actions work from the keyboard.

import { latest, post, query } from "../api.js";
import { errorBox, h, pager, replace, timeEl, toast } from "../dom.js";

const PAGE = 25;
const TURNS = 100;
const SEVERITIES = ["critical", "high", "medium", "low", "info"];
const ACTIONS = [
  ["ack", "Acknowledge", ["open"]],
  ["resolve", "Resolve", ["open", "acknowledged"]],
  ["dismiss", "Dismiss", ["open", "acknowledged"]],
  ["false_positive", "False positive", ["open", "acknowledged"]],
  ["reopen", "Reopen", ["acknowledged", "resolved", "dismissed", "false_positive"]],
];

export const routes = [
  { pattern: /^\/conversations$/, section: "conversations", title: "Conversations", render: listPage },
  { pattern: /^\/conversations\/(.+)$/, section: "conversations", title: "Conversation", render: conversationPage },
];

async function listPage({ main, query: params }) {
  const offset = Number(params.get("offset") ?? 0) || 0;
  const project = params.get("project") ?? "";
  const data = await latest("conversations", `/conversations${query({ limit: PAGE, offset, project })}`);
  const rows = data.conversations.map((row) => {
    const c = row.conversation;
    return h("tr", null,
      h("td", null, h("a", { href: `#/conversations/${encodeURIComponent(c.conversation_id)}` }, c.title || c.conversation_id)),
      h("td", null, row.project),
      h("td", null, c.format),
      h("td", { class: "mono" }, String(row.messages)),
      h("td", { class: "mono" }, String(row.tool_calls)),
      h("td", null, timeEl(c.started_at)),
    );
  });
  replace(main,
    h("h1", null, "Conversations"),
    data.total === 0
      ? h("p", { class: "muted" }, "Nothing imported yet. Run `proctor ingest` or point an agent at the intake endpoint.")
      : h("div", { class: "table-wrap" }, h("table", null,
          h("thead", null, h("tr", null, ["Title", "Project", "Format", "Messages", "Tool calls", "Started"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", null, rows))),
    pager(offset, PAGE, data.conversations.length, data.total, (next) => {
      location.hash = `#/conversations${query({ offset: next || null, project: project || null })}`;
    }),
  );
}

async function conversationPage({ main, params: [ref], query: params }) {
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

async function renderFindings(container, conversationId, view) {
  const data = await latest(`findings:${conversationId}`, `/findings${query({ conversation: conversationId, limit: 100 })}`);
  // Highest severity first; within one severity, oldest first (a stable order across reloads).
  const findings = [...data.findings].sort((a, b) =>
    SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity)
    || a.created_at.localeCompare(b.created_at)
    || a.finding_id.localeCompare(b.finding_id));
  const list = h("ul", { class: "plain", id: "finding-list" }, findings.map((finding) => h("li", null, findingCard(finding, view))));
  replace(container,
    h("h2", null, `Findings (${data.total})`),
    findings.length ? list : h("p", { class: "muted" }, "No findings for this conversation."));
}

function findingCard(finding, view) {
  const card = h("article", {
    class: `card finding sev-${finding.severity}${finding.digested ? " digested" : ""}`,
    "aria-label": `${finding.severity} finding: ${finding.title}`,
    dataset: { finding: finding.finding_id },
  });
  const draw = () => replace(card, ...(card.classList.contains("digested") ? digestedBody(finding, card, draw) : fullBody(finding, card, view, draw)));
  draw();
  return card;
}

function digestedBody(finding, card, draw) {
  return [h("div", { class: "row spread" },
    h("span", null, h("span", { class: `badge sev-${finding.severity}` }, finding.severity), " ", h("span", { class: "title" }, finding.title)),
    h("button", { type: "button", "aria-expanded": "false", on: { click: () => setDigested(finding, card, false, draw) } }, "Expand"))];
}

function fullBody(finding, card, view, draw) {
  const meta = [
    h("span", { class: `badge sev-${finding.severity}` }, finding.severity),
    h("span", { class: "badge" }, finding.status.replace("_", " ")),
    finding.speculative && h("span", { class: "badge speculative", title: "A model's guess, not a certainty" }, "speculative"),
    h("span", { class: "muted" }, finding.origin === "rule" ? `rule ${finding.rule} v${finding.rule_version}` : `model supervisor`),
  ];
  const pause = finding.action === "pause" || finding.action === "stop";
  return [
    h("div", { class: "row" }, meta),
    h("h3", { class: "title" }, finding.title),
    finding.content && h("p", null, finding.content),
    (finding.actual || finding.threshold) && h("p", { class: pause ? "pause-detail" : "muted" },
      pause ? "Paused by a deterministic rule. " : "",
      finding.rule && `Rule ${finding.rule}`, finding.actual && ` · actual: ${finding.actual}`, finding.threshold && ` · threshold: ${finding.threshold}`),
    finding.evidence.length > 0 && h("ul", { class: "evidence" }, finding.evidence.map((evidence) => h("li", null,
      evidence.missing
        ? h("span", null, `Never happened: ${evidence.missing}`)
        : h("a", { href: `#/conversations/${encodeURIComponent(finding.conversation_id)}?source=${encodeURIComponent(evidence.source_id)}`,
            on: { click: (event) => { event.preventDefault(); view.show(evidence); } } },
            evidence.excerpt ? `“${evidence.excerpt}”` : `${evidence.source_type} ${evidence.field ?? ""}`.trim())))),
    h("div", { class: "row actions", role: "group", "aria-label": "Finding actions" },
      ACTIONS.filter(([, , from]) => from.includes(finding.status)).map(([action, label]) =>
        h("button", { type: "button", on: { click: () => changeStatus(finding, action, card, draw) } }, label)),
      h("button", { type: "button", "aria-expanded": "true", on: { click: () => setDigested(finding, card, true, draw) } }, "Collapse")),
  ];
}

async function changeStatus(finding, action, card, draw) {
  try {
    const updated = await post(`/findings/${encodeURIComponent(finding.finding_id)}/status`, { action });
    Object.assign(finding, updated);
    draw();
    toast(`Finding ${updated.status.replace("_", " ")}.`);
    /** @type {HTMLElement | null} */ (card.querySelector("button"))?.focus();
  } catch (error) {
    card.appendChild(errorBox(error));
  }
}

async function setDigested(finding, card, digested, draw) {
  try {
    const updated = await post(`/findings/${encodeURIComponent(finding.finding_id)}/digested`, { digested });
    Object.assign(finding, updated);
    card.classList.toggle("digested", digested);
    draw();
    /** @type {HTMLElement | null} */ (card.querySelector("button"))?.focus();
  } catch (error) {
    card.appendChild(errorBox(error));
  }
}
