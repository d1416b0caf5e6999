// A conversation's findings stream: cards with evidence links (shown in the transcript
// view the page passes in), status actions and the digested collapse, all from the keyboard.

import { latest, post, query } from "../api.js";
import { errorBox, h, replace, toast } from "../dom.js";
import { rememberButton } from "./memory-button.js";

const SEVERITIES = ["critical", "high", "medium", "low", "info"];
const ACTIONS = [
  ["ack", "Acknowledge", ["open"]],
  ["resolve", "Resolve", ["open", "acknowledged"]],
  ["dismiss", "Dismiss", ["open", "acknowledged"]],
  ["false_positive", "False positive", ["open", "acknowledged"]],
  ["reopen", "Reopen", ["acknowledged", "resolved", "dismissed", "false_positive"]],
];

/**
 * @typedef {{ show: (evidence: any) => Promise<void> }} EvidenceView
 */

export async function renderFindings(container, conversationId, view) {
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
