// One conversation as a trace (SPEC UI-3, SUP-8; seed 004): turns → messages and tool calls
// → sub-agent cards as a tree with a waterfall, beside the findings stream. A window of the
// reading order is shown at a time (long conversations stay fast); evidence links load the
// window that holds the cited source, scroll to it and mark the cited characters; a finding
// marker on a row leads to that finding's card, and back.

import { latest, query } from "../api.js";
import { h, panel, replace, timeEl, toast } from "../dom.js";
import { renderFindings } from "./findings-panel.js";
import { renderGoalPanel } from "./goal-panel.js";
import { renderSupervisionPanel } from "./supervision-panel.js";
import { formatCount, formatDuration } from "./trace-format.js";
import { focusItem, itemDomId, setExpanded, showSource, treeRows, unfoldField, wireTree } from "./trace-tree.js";

/** Items per window of the trace. */
const WINDOW = 100;

export async function conversationPage({ main, params: [ref], query: params }) {
  // The first window of the trace is asked for at once, alongside the summary.
  const firstWindow = windowOf(ref, { around: params.get("source") });
  firstWindow.catch(() => {});
  const summary = await latest("conversation", `/conversations/${encodeURIComponent(ref)}`);
  const c = summary.conversation;
  const id = c.conversation_id;
  const transcript = h("section", { class: "transcript trace", "aria-label": "Trace" });
  const stream = h("section", { class: "findings", "aria-label": "Findings" });
  const crumbs = h("div", { class: "crumbs" });
  const goals = h("section", { class: "goal-panel", "aria-label": "Goal" });
  const supervision = h("section", { class: "supervision-panel", "aria-label": "Supervision" });
  const root = h("div", { class: "trace-page", dataset: { page: "trace" } },
    crumbs,
    h("h1", null, c.title || id),
    h("p", { class: "muted" },
      `${summary.project} · ${c.format} · ${formatCount(summary.messages)} messages · ${formatCount(summary.tool_calls)} tool calls · `,
      summary.subagents ? `${summary.subagents} sub-agent${summary.subagents === 1 ? "" : "s"} · ` : "",
      timeEl(c.started_at)),
    h("div", { class: "grid-2" }, transcript, stream),
    h("div", { class: "side-panels" }, goals, supervision));
  replace(main, root);
  const view = new TraceView(transcript, stream, id, crumbs, c);
  const shown = view.load(params.get("source"), firstWindow).then(() => { root.dataset.ready = "true"; });
  // The findings panel loads, fails and retries on its own: the trace stays whatever it does.
  // The goal and supervision panels start once the trace shows (or failed): they do not
  // compete with its first window for the server.
  const sides = shown.catch(() => {}).then(() => Promise.all([
    panel(goals, () => renderGoalPanel(goals, { conversationId: id, view }), { label: "Goal" }),
    panel(supervision, () => renderSupervisionPanel(supervision, { conversationId: id }), { label: "Supervision" })]));
  await Promise.all([shown, panel(stream, () => renderFindings(stream, id, view), { label: "Findings" }), sides]);
}

/** The trace of one conversation, a window at a time, with a way to show one cited source. */
class TraceView {
  constructor(container, stream, conversationId, crumbs, conversation) {
    this.container = container;
    this.stream = stream;
    this.conversationId = conversationId;
    this.crumbs = crumbs;
    this.conversation = conversation;
    this.tree = h("ul", { role: "tree", id: "turns", class: "trace-tree", "aria-label": "Turns, tool calls and sub-agents" });
    wireTree(this.tree);
    this.status = h("p", { class: "muted window-status", "aria-live": "polite" });
    this.nav = h("div", { class: "row trace-nav" });
    this.offset = 0;
    this.total = 0;
    /** @type {HTMLElement | null} where focus was when an evidence link was followed */
    this.returnTo = null;
    replace(container,
      h("div", { class: "row spread" },
        h("h2", null, "Trace"),
        h("div", { class: "row", role: "group", "aria-label": "Tree" },
          h("button", { type: "button", on: { click: () => this.expandAll(true) } }, "Expand all"),
          h("button", { type: "button", on: { click: () => this.expandAll(false) } }, "Collapse all"))),
      this.status,
      h("div", { class: "trace-columns", "aria-hidden": "true" }, h("span", null, "Step"), h("span", { class: "waterfall-head" }, "Timeline")),
      this.tree,
      this.nav);
  }

  /** Show the window at `this.offset`, or the one holding source `around` (or `early`, that
   * window already asked for). */
  async load(around, early = null) {
    const page = await (early ?? windowOf(this.conversationId, { offset: around ? null : this.offset, around }));
    this.offset = page.offset;
    this.total = page.total;
    replace(this.tree, treeRows(page, { onMarker: (findingId) => this.goToFinding(findingId) }));
    const first = this.tree.querySelector("[role=treeitem]");
    if (first) first.setAttribute("tabindex", "0");
    this.renderCrumbs(page);
    this.renderNav(page);
    if (around) await this.show({ source_id: around });
  }

  renderCrumbs(page) {
    if (!page.parent) {
      replace(this.crumbs);
      return;
    }
    const parent = page.parent;
    const back = `#/conversations/${encodeURIComponent(parent.conversation_id)}${parent.tool_call_id ? query({ source: parent.tool_call_id }) : ""}`;
    const run = page.subagent_run;
    replace(this.crumbs,
      h("nav", { class: "breadcrumb", "aria-label": "Breadcrumb" },
        h("ol", null,
          h("li", null, h("a", { href: "#/conversations" }, "Conversations")),
          h("li", null, parent.imported === false
            ? h("span", { class: "parent-link muted", title: parent.conversation_id }, "Parent session (not imported)")
            : h("a", { href: back, class: "parent-link" }, parent.title || parent.conversation_id)),
          h("li", null, h("span", { "aria-current": "page" }, `Sub-agent${run?.agent_type ? ` · ${run.agent_type}` : ""}`)))),
      run && h("p", { class: "muted subagent-task" },
        run.description ? `Task given: ${run.description}` : "",
        run.duration_ms != null ? ` · ran ${formatDuration(run.duration_ms)}` : ""));
  }

  renderNav(page) {
    const end = this.offset + page.items.length;
    const turns = page.turns.length ? `, turn${page.turns.length > 1 ? "s" : ""} ${page.turns[0].turn}${page.turns.length > 1 ? `–${page.turns[page.turns.length - 1].turn}` : ""} of ${page.turn_count}` : "";
    replace(this.status, `Items ${this.total ? this.offset + 1 : 0}–${end} of ${formatCount(this.total)}${turns}` +
      (page.span_ms ? ` · whole trace ${formatDuration(page.span_ms)}` : ""));
    replace(this.nav,
      this.offset > 0 && h("button", { type: "button", on: { click: () => this.page(Math.max(0, this.offset - WINDOW)) } }, "Earlier items"),
      end < this.total && h("button", { type: "button", on: { click: () => this.page(end) } }, "Later items"));
  }

  async page(offset) {
    this.offset = offset;
    await this.load(null);
    const first = /** @type {HTMLElement | null} */ (this.tree.querySelector("[role=treeitem]"));
    if (first) focusItem(this.tree, first);
  }

  expandAll(open) {
    for (const item of this.tree.querySelectorAll("[role=treeitem][aria-expanded]")) setExpanded(item, open);
  }

  /** Focus the finding card `findingId` in the findings panel. */
  goToFinding(findingId) {
    const card = /** @type {HTMLElement | null} */ (this.stream.querySelector(`[data-finding="${CSS.escape(findingId)}"]`));
    if (!card) {  // on another page of the panel, or filtered out: the panel opens it
      this.stream.dispatchEvent(new CustomEvent("show-finding", { detail: findingId }));
      return;
    }
    if (!card.hasAttribute("tabindex")) card.setAttribute("tabindex", "-1");
    for (const old of this.stream.querySelectorAll(".targeted")) old.classList.remove("targeted");
    card.classList.add("targeted");
    card.scrollIntoView({ block: "nearest" });
    card.focus({ preventScroll: true });
  }

  /** Scroll to the source cited by `evidence`, mark its range, and move focus there. */
  async show(evidence) {
    const from = /** @type {HTMLElement | null} */ (document.activeElement);
    if (from && this.stream.contains(from)) this.returnTo = from;
    let row = document.getElementById(itemDomId(evidence.source_id));
    if (!row) {
      await this.load(evidence.source_id);
      row = document.getElementById(itemDomId(evidence.source_id));
    }
    if (!row) {
      toast("That source is not in this conversation's trace.");
      return;
    }
    for (const old of this.tree.querySelectorAll(".highlight")) old.classList.remove("highlight");
    for (const old of this.tree.querySelectorAll("mark")) old.replaceWith(document.createTextNode(old.textContent ?? ""));
    for (const old of this.tree.querySelectorAll(".back-to-finding")) old.remove();
    for (let parent = row.parentElement?.closest("[role=treeitem]"); parent; parent = parent.parentElement?.closest("[role=treeitem]")) {
      setExpanded(parent, true);
    }
    row.classList.add("highlight");
    if (evidence.field && evidence.start != null && evidence.end != null) markRange(row, evidence.field, evidence.start, evidence.end);
    if (this.returnTo) {
      const back = this.returnTo;
      row.querySelector(":scope > .trace-line .trace-meta")?.prepend(h("button", {
        type: "button", class: "back-to-finding",
        on: { click: () => { if (back.isConnected) back.focus(); else toast("That finding is no longer shown."); } },
      }, "Back to the finding"));
    }
    row.scrollIntoView({ block: "center" });
    focusItem(this.tree, row, { preventScroll: true });
  }
}

/** Ask for one window of a conversation's trace (a later ask supersedes an earlier one). */
function windowOf(conversationRef, { offset = null, around = null }) {
  const path = `/conversations/${encodeURIComponent(conversationRef)}/transcript${query({ limit: WINDOW, offset, around })}`;
  return latest("trace-window", path);
}

/** Wrap characters [start, end) of the row's `field` text in <mark> (its raw text). */
function markRange(row, fieldName, start, end) {
  const body = row.querySelector(":scope > .trace-body");
  if (!body) return;
  const target = /** @type {HTMLElement | undefined} */ ([...body.querySelectorAll("[data-field]")]
    .find((el) => /** @type {HTMLElement} */ (el).dataset.field === fieldName));
  if (!target) return;
  // Marks go on the raw text: switch a rendered or structured view to its source.
  const raw = target.closest(".folded") ?? target;
  const toggle = /** @type {HTMLElement | null} */ (raw.parentElement?.querySelector(":scope > .body-tools > .source-toggle"));
  if (toggle && raw.hidden) showSource(toggle, /** @type {HTMLElement} */ (raw.previousElementSibling), raw, true);
  const details = target.closest("details");
  if (details) details.open = true;
  if (target.tagName !== "PRE") return;
  unfoldField(target);
  const text = target.textContent ?? "";
  const from = Math.max(0, Math.min(start, text.length));
  const to = Math.max(from, Math.min(end, text.length));
  replace(target, text.slice(0, from), h("mark", null, text.slice(from, to)), text.slice(to));
}
