// A conversation's findings stream: cards with evidence links (shown in the transcript
// view the page passes in), status actions and the digested collapse, all from the keyboard.
// The server pages it (50 at a time, the true total in the heading) and filters it by
// status, severity, rule and origin; a link naming one finding (…?finding=ID) opens the
// page holding it and focuses its card.

import { ApiError, Superseded, latest, post, query } from "../api.js";
import { errorBox, h, replace, toast } from "../dom.js";
import { rememberButton } from "./memory-button.js";

const SEVERITIES = ["high", "medium", "low", "info"];
const ACTIONS = [
  ["ack", "Acknowledge", ["open"]],
  ["resolve", "Resolve", ["open", "acknowledged"]],
  ["dismiss", "Dismiss", ["open", "acknowledged"]],
  ["false_positive", "False positive", ["open", "acknowledged"]],
  ["reopen", "Reopen", ["acknowledged", "resolved", "dismissed", "false_positive"]],
];

/**
 * @typedef {{ show: (evidence: any) => Promise<void> }} EvidenceView
 * @typedef {{ finding?: string | null }} PanelOptions
 */

const PAGE = 50;
const STATUSES = ["open", "acknowledged", "resolved", "dismissed", "false_positive"];

/**
 * Draw the findings of one conversation into `container`.
 * @param {HTMLElement} container
 * @param {string} conversationId
 * @param {EvidenceView} view
 * @param {PanelOptions} [options] `finding`: open the page holding this finding and focus
 *   its card (default: the `finding` parameter of the page's address)
 */
export async function renderFindings(container, conversationId, view, options = {}) {
  const panel = new FindingsPanel(container, conversationId, view);
  // Another part of the page (the trace's finding markers) asks for a finding that may be
  // on another page of the panel, or hidden by its filters: a `show-finding` event.
  container.addEventListener("show-finding", (event) => panel.showFinding(/** @type {CustomEvent} */ (event).detail));
  await panel.start(options.finding ?? findingInAddress());
}

function findingInAddress() {
  return new URLSearchParams(location.hash.split("?")[1] ?? "").get("finding");
}

class FindingsPanel {
  constructor(container, conversationId, view) {
    this.container = container;
    this.conversationId = conversationId;
    this.view = view;
    this.filters = { status: "", severity: "", rule: "", origin: "" };
    this.offset = 0;
    this.heading = h("h2", null, "Findings");
    this.form = h("form", { class: "panel-filters", "aria-label": "Filter this conversation's findings" });
    this.list = h("div", { class: "finding-page" });
  }

  async start(focus) {
    const rules = await latest(`findings-rules:${this.conversationId}`,
      `/findings/groups${query({ by: "rule", conversation: this.conversationId, limit: 100 })}`);
    this.drawFilters(rules.groups.map((g) => g.key).sort());
    replace(this.container, this.heading, this.form, this.list);
    await this.load(focus);
  }

  drawFilters(rules) {
    const any = [["", "Any"]];
    const select = (field, label, options) => {
      const id = `panel-${field}`;
      return h("label", { for: id }, label, h("select", {
        id, on: { change: (event) => { this.filters[field] = event.target.value; this.offset = 0; this.reload(null, id); } },
      }, options.map(([value, text]) => h("option", { value, selected: value === this.filters[field] }, text))));
    };
    replace(this.form,
      select("status", "Status", [...any, ...STATUSES.map((s) => [s, s.replace("_", " ")])]),
      select("severity", "Severity", [...any, ...SEVERITIES.map((s) => [s, s])]),
      select("rule", "Rule", [...any, ...rules.map((r) => [r, r])]),
      select("origin", "Origin", [...any, ["rule", "rule"], ["model", "model"]]));
  }

  /** Open the page holding finding `findingId` with no filters, and focus its card. */
  async showFinding(findingId) {
    if (Object.values(this.filters).some(Boolean)) {
      for (const field of Object.keys(this.filters)) this.filters[field] = "";
      for (const select of this.form.querySelectorAll("select")) /** @type {HTMLSelectElement} */ (select).value = "";
    }
    await this.reload(findingId);
  }

  /** Load again after a filter or page change: a newer request wins, an error is shown. */
  async reload(focus, keepFocusOn) {
    try {
      await this.load(focus, keepFocusOn);
    } catch (error) {
      if (error instanceof Superseded) return;
      replace(this.list, errorBox(error), h("button", { type: "button", on: { click: () => this.reload(null) } }, "Retry"));
    }
  }

  /** Show a page (the one holding `focus`, when given) and focus the card asked for. */
  async load(focus, keepFocusOn) {
    const params = { conversation: this.conversationId, ...this.filters, limit: PAGE };
    let data;
    try {
      data = await latest(`findings:${this.conversationId}`, `/findings${query({ ...params, offset: focus ? null : this.offset, around: focus || null })}`);
    } catch (error) {
      if (!(focus && error instanceof ApiError && error.status === 404)) throw error;
      toast("That finding does not exist any more.");
      data = await latest(`findings:${this.conversationId}`, `/findings${query({ ...params, offset: this.offset })}`);
      focus = null;
    }
    this.offset = data.offset;
    replace(this.heading, `Findings (${data.total})`);
    const cards = data.findings.map((finding) => h("li", null, findingCard(finding, this.view)));
    replace(this.list,
      data.findings.length ? h("ul", { class: "plain", id: "finding-list" }, cards)
        : h("p", { class: "muted" }, data.total === 0 && !Object.values(this.filters).some(Boolean)
          ? "No findings for this conversation." : "No findings match these filters."),
      this.pager(data));
    if (keepFocusOn) document.getElementById(keepFocusOn)?.focus();
    if (focus) {
      const card = /** @type {HTMLElement | null} */ (this.list.querySelector(`[data-finding="${CSS.escape(focus)}"]`));
      if (card) {
        card.scrollIntoView({ block: "center" });
        card.focus({ preventScroll: true });
      } else {
        toast("That finding is not in this conversation.");
      }
    }
  }

  pager(data) {
    const { offset, total } = data;
    const count = data.findings.length;
    if (offset === 0 && count >= total) return null;
    const go = (next) => { this.offset = next; this.reload(null).then(() => this.heading.scrollIntoView({ block: "start" })); };
    return h("nav", { class: "pager", "aria-label": "Pages of findings" },
      h("button", { type: "button", disabled: offset === 0, on: { click: () => go(Math.max(0, offset - PAGE)) } }, "Previous"),
      h("span", { class: "muted" }, `${count ? offset + 1 : 0}–${offset + count} of ${total}`),
      h("button", { type: "button", disabled: offset + count >= total, on: { click: () => go(offset + PAGE) } }, "Next"));
  }
}

function findingCard(finding, view) {
  const card = h("article", {
    class: `card finding sev-${finding.severity}${finding.digested ? " digested" : ""}`,
    "aria-label": `${finding.severity} finding: ${finding.title}`,
    tabindex: "-1",
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
      rememberButton(finding),
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
