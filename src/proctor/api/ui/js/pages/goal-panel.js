// A conversation's goal (GOAL-1…3): the current goal, its history (each version with the
// user turn that set it, linked into the trace), each user turn's intent label with its
// confidence (low confidence marked: it never changed the goal), and the goal findings.
// Goals are recorded by `proctor check` (lexical labels when no model is configured) and
// by supervision in goal mode; this panel only reads them.

import { latest } from "../api.js";
import { h, replace, timeEl } from "../dom.js";

const REASONS = {
  initial: "first request",
  task: "task",
  refine: "refined",
  expand: "expanded",
  correct: "corrected",
  new_goal: "new goal",
  cancel: "cancelled",
};

/**
 * Draw the goal panel of one conversation into `container`.
 * @param {HTMLElement} container
 * @param {{ conversationId: string, view: { show: (evidence: any) => Promise<void> }, signal?: AbortSignal }} options
 */
export async function renderGoalPanel(container, { conversationId, view, signal }) {
  const data = await latest(`goals:${conversationId}`, `/conversations/${encodeURIComponent(conversationId)}/goals`);
  if (signal?.aborted) return;
  const link = (sourceId, text) => turnLink(conversationId, sourceId, text, view);
  const current = data.current;
  replace(container,
    h("h2", null, "Goal"),
    current
      ? h("div", { class: "goal-current" },
          h("p", { class: "goal-text" }, current.goal),
          h("p", { class: "muted" },
            h("span", { class: `badge goal-reason${current.closed ? " closed" : ""}` }, `v${current.version} · ${REASONS[current.reason] ?? current.reason}`),
            " ",
            current.source_id ? link(current.source_id, "set by this user turn") : "",
            current.created_at ? [" · ", timeEl(current.created_at)] : ""))
      : h("p", { class: "muted" }, "No goal recorded yet. `proctor check` records it from the user's turns; supervision in goal mode does too."),
    data.versions.length > 0 && h("section", { class: "goal-history", "aria-label": "Goal history" },
      h("h3", null, `History (${data.versions.length} version${data.versions.length === 1 ? "" : "s"})`),
      h("ol", { class: "plain goal-versions" }, [...data.versions].reverse().map((version) =>
        h("li", { class: "goal-version", dataset: { version: String(version.version) } },
          h("div", { class: "row" },
            h("span", { class: `badge goal-reason${version.closed ? " closed" : ""}` }, `v${version.version} · ${REASONS[version.reason] ?? version.reason}`),
            version.source_id ? link(version.source_id, "user turn") : h("span", { class: "muted" }, "no user turn"),
            version.created_at && timeEl(version.created_at),
            h("code", { class: "muted", title: "Goal hash" }, version.goal_hash.slice(0, 12))),
          h("p", { class: "goal-text" }, version.goal))))),
    data.turns.length > 0 && h("section", { class: "goal-turns", "aria-label": "Intent of each user turn" },
      h("h3", null, "User turns"),
      h("ol", { class: "plain" }, data.turns.map((turn) => h("li", { class: "goal-turn", dataset: { source: turn.source_id } },
        h("div", { class: "row" }, intentBadge(turn.intent),
          turn.set_version != null && h("span", { class: "badge goal-set" }, `set v${turn.set_version}`),
          link(turn.source_id, turn.text || "(empty turn)")))))),
    data.tasks.some((task) => task.versions.length) && h("section", { "aria-label": "Task goals" },
      h("h3", null, "Tasks"),
      h("ul", { class: "plain" }, data.tasks.filter((task) => task.versions.length).map((task) =>
        h("li", null, h("strong", null, task.title), " — ", task.versions[task.versions.length - 1].goal)))),
    h("section", { class: "goal-findings", "aria-label": "Goal findings" },
      h("h3", null, `Goal findings (${data.findings.length})`),
      data.findings.length
        ? h("ul", { class: "plain" }, data.findings.map((finding) => h("li", { class: "goal-finding" },
            h("span", { class: `badge sev-${finding.severity}` }, finding.severity), " ",
            h("span", null, finding.title), " ",
            finding.evidence.find((e) => !e.missing) && evidenceLink(finding, view))))
        : h("p", { class: "muted" }, "No drift, context loss or unverified completion found.")));
}

function intentBadge(intent) {
  if (!intent) return h("span", { class: "badge intent unlabelled" }, "not labelled yet");
  const percent = Math.round(intent.confidence * 100);
  return h("span", { class: "row intent-label" },
    h("span", { class: `badge intent intent-${intent.intent}` }, intent.intent.replace("_", " ")),
    h("span", { class: "muted", title: `Classified by ${intent.classifier}` }, `${percent}%`),
    intent.low_confidence && h("span", { class: "badge low-confidence", title: "Under the threshold: recorded, but it did not change the goal" }, "low confidence"));
}

function turnLink(conversationId, sourceId, text, view) {
  return h("a", {
    href: `#/conversations/${encodeURIComponent(conversationId)}?source=${encodeURIComponent(sourceId)}`,
    class: "turn-link",
    on: { click: (event) => { event.preventDefault(); view.show({ source_id: sourceId }); } },
  }, text);
}

function evidenceLink(finding, view) {
  const evidence = finding.evidence.find((e) => !e.missing);
  return h("a", {
    href: `#/conversations/${encodeURIComponent(finding.conversation_id)}?source=${encodeURIComponent(evidence.source_id)}`,
    on: { click: (event) => { event.preventDefault(); view.show(evidence); } },
  }, "evidence");
}
