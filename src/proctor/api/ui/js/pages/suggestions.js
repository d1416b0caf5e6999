// Suggestions and what they made (SPEC HB-5, HB-6): the inbox of suggestions a review's
// changes produced — each with why it is suggested and, on request, the changes behind it
// (its graph object and the quoted sources) — to accept or ignore; and the tasks and
// memories accepting made, so nothing Proctor creates is write-only. Titles, texts and
// excerpts are observed content: they go into text nodes only.

import { get, latest, post, query } from "../api.js";
import { errorBox, h, pager, replace, timeEl, toast } from "../dom.js";

const PAGE = 20;
const STATUSES = [["open", "Open"], ["accepted", "Accepted"], ["ignored", "Ignored"]];
/** What accepting does, by kind (the server decides; this only says it beforehand). */
const ACCEPTING = {
  open_item: "Accepting makes a paused task.",
  convention: "Accepting confirms the entity and records a memory.",
};

export const routes = [
  { pattern: /^\/suggestions$/, section: "suggestions", title: "Suggestions", render: suggestionsPage },
  { pattern: /^\/tasks$/, section: "suggestions", title: "Tasks and memories", render: madePage },
];

function kindLabel(kind) {
  return kind.replace(/_/g, " ");
}

async function suggestionsPage({ main, query: params, signal }) {
  const status = STATUSES.some(([name]) => name === params.get("status")) ? params.get("status") : "open";
  const offset = Number(params.get("offset") ?? 0) || 0;
  const data = await latest("suggestions", `/suggestions${query({ status, limit: PAGE, offset })}`);
  if (signal.aborted) return;
  const address = (next) => `#/suggestions${query({ status: next.status === "open" ? null : next.status, offset: next.offset || null })}`;
  const live = h("p", { class: "visually-hidden", id: "suggestions-live", "aria-live": "polite" });
  const list = h("ol", { class: "plain suggestion-list", id: "suggestion-list" });
  const empty = () => h("p", { class: "muted", id: "suggestions-empty" }, status === "open"
    ? "No open suggestions. They come from what a review changed (a plan that suggests, or `proctor suggestions retry RESULT`)."
    : `No ${status} suggestions.`);
  const context = { status, live, list, empty };
  for (const suggestion of data.suggestions) list.append(h("li", null, suggestionCard(suggestion, context)));
  replace(main, h("div", { class: "suggestions-page" },
    h("div", { class: "row spread" },
      h("h1", null, "Suggestions"),
      h("a", { href: "#/tasks", id: "made-link" }, "Tasks and memories they made")),
    h("nav", { class: "tabs status-tabs", "aria-label": "Status" },
      STATUSES.map(([name, label]) => h("a", {
        href: address({ status: name, offset: 0 }),
        class: "tab-link",
        "aria-current": name === status ? "page" : null,
      }, label))),
    live,
    data.suggestions.length ? list : empty(),
    pager(offset, PAGE, data.suggestions.length, null, (next) => { location.hash = address({ status, offset: next }); })));
}

function suggestionCard(suggestion, context) {
  const id = suggestion.suggestion_id;
  const changes = h("div", { class: "suggestion-changes" });
  const details = h("details", { class: "suggestion-behind", on: { toggle: () => {
    if (/** @type {HTMLDetailsElement} */ (details).open && !changes.childNodes.length) loadChanges(changes, id);
  } } },
    h("summary", null, `The changes behind it (${suggestion.evidence.length} source${suggestion.evidence.length === 1 ? "" : "s"})`),
    changes);
  const outcome = h("div", { class: "suggestion-outcome", "aria-live": "polite" });
  const card = h("article", { class: `card suggestion decided-${suggestion.status}`, dataset: { suggestion: id }, "aria-labelledby": `suggestion-${id}` },
    h("div", { class: "row spread" },
      h("h2", { id: `suggestion-${id}` }, suggestion.title),
      h("span", { class: "row" },
        h("span", { class: "badge kind" }, kindLabel(suggestion.kind)),
        h("span", { class: "badge status" }, suggestion.status),
        timeEl(suggestion.updated_at))),
    // Phrased by a model, the text reads differently from the rule's own words (the why).
    suggestion.phrased && suggestion.text !== suggestion.rule_text && h("p", { class: "suggestion-text" }, suggestion.text),
    h("p", { class: "suggestion-why" }, h("strong", null, "Why: "), suggestion.rule_text),
    details,
    outcome);
  if (suggestion.status === "open") {
    const accept = h("button", { type: "button", class: "primary", on: { click: () => decide(card, suggestion, "accept", outcome, context) } }, "Accept");
    const ignore = h("button", { type: "button", on: { click: () => decide(card, suggestion, "ignore", outcome, context) } }, "Ignore");
    card.insertBefore(h("div", { class: "row suggestion-actions" }, accept, ignore,
      h("span", { class: "muted small-text" }, ACCEPTING[suggestion.kind] ?? "Accepting records your agreement.", " Ignoring hides it until new evidence appears.")), outcome);
  } else if (suggestion.status === "accepted") {
    outcome.append(h("p", { class: "muted" }, "Accepted. ", h("a", { href: "#/tasks" }, "What it made")));
  }
  return card;
}

async function decide(card, suggestion, action, outcome, context) {
  const buttons = [...card.querySelectorAll(".suggestion-actions button")];
  buttons.forEach((button) => button.setAttribute("disabled", ""));
  let decision;
  try {
    decision = await post(`/suggestions/${encodeURIComponent(suggestion.suggestion_id)}/${action}`);
  } catch (error) {
    replace(outcome, errorBox(error));
    buttons.forEach((button) => button.removeAttribute("disabled"));
    return;
  }
  const made = [];
  if (decision.task) made.push(h("li", null, "Task (paused): ", h("a", { href: `#/tasks`, dataset: { task: decision.task.task_id } }, decision.task.title)));
  if (decision.confirmed_entity_id) made.push(h("li", null, "Entity confirmed: ", h("a", { href: `#/graph${query({ select: `entity:${decision.confirmed_entity_id}` })}` }, decision.confirmed_entity_id.slice(0, 8))));
  if (decision.memory) made.push(h("li", null, "Memory: ", h("a", { href: "#/tasks" }, decision.memory.text)));
  const verb = action === "accept" ? "Accepted" : "Ignored";
  const message = `${verb}: ${suggestion.title}.${made.length ? " It made " + made.length + " thing" + (made.length === 1 ? "" : "s") + "." : ""}`;
  context.live.textContent = message;
  toast(message);
  card.querySelector(".suggestion-actions")?.remove();
  card.classList.replace("decided-open", `decided-${decision.suggestion.status}`);
  const badge = card.querySelector(".badge.status");
  if (badge) badge.textContent = decision.suggestion.status;
  replace(outcome, h("p", { class: "decided" }, `${verb}.`), made.length ? h("ul", { class: "made" }, made) : "");
  if (context.status === "open") {
    // The decided card leaves the open list; focus moves to the next card (or the list's end).
    const item = card.closest("li");
    const next = /** @type {HTMLElement | null} */ (item?.nextElementSibling?.querySelector(".suggestion-actions button") ?? item?.previousElementSibling?.querySelector(".suggestion-actions button") ?? null);
    const moved = item?.parentElement;
    item?.remove();
    if (moved && !moved.children.length) moved.replaceWith(context.empty());
    if (next) next.focus();
    else document.getElementById("made-link")?.focus();
  }
}

async function loadChanges(container, suggestionId) {
  replace(container, h("p", { class: "muted" }, "Loading…"));
  let changes;
  try {
    changes = await get(`/suggestions/${encodeURIComponent(suggestionId)}/changes`);
  } catch (error) {
    replace(container, errorBox(error));
    return;
  }
  const graphLink = changes.object_type && ["entity", "relation", "entity_change", "event"].includes(changes.object_type)
    ? `#/graph/${encodeURIComponent(changes.result_id)}${query({ select: `${changes.object_type}:${changes.object_id}` })}`
    : `#/graph/${encodeURIComponent(changes.result_id)}`;
  replace(container,
    h("p", null, "From ", h("a", { href: graphLink, class: "suggestion-object" },
      changes.object_type ? `${kindLabel(changes.object_type)} ${String(changes.object_id ?? "").slice(0, 8)}` : "the review",
      ` in result ${changes.result_id.slice(0, 8)}`)),
    changes.evidence.length
      ? h("ol", { class: "suggestion-evidence" }, changes.evidence.map((source) => h("li", null,
          source.exists
            ? [h("a", { href: `#/conversations/${encodeURIComponent(source.conversation_id)}${query({ source: source.source_id })}` }, source.title || kindLabel(source.source_type)),
               source.occurred_at ? [" · ", timeEl(source.occurred_at)] : "",
               h("blockquote", { class: "excerpt" }, source.excerpt)]
            : h("span", { class: "muted" }, `${kindLabel(source.source_type)} ${source.source_id.slice(0, 12)} (deleted since)`))))
      : h("p", { class: "muted" }, "No sources recorded."),
    changes.evidence_total > changes.evidence.length
      ? h("p", { class: "muted" }, `${changes.evidence_total - changes.evidence.length} more sources not shown.`)
      : "");
}

// --- what accepting made ------------------------------------------------------------

async function madePage({ main, signal }) {
  const [tasks, memories] = await Promise.all([latest("made:tasks", "/tasks"), latest("made:memories", "/memories")]);
  if (signal.aborted) return;
  replace(main, h("div", { class: "made-page" },
    h("div", { class: "row spread" }, h("h1", null, "Tasks and memories"), h("a", { href: "#/suggestions" }, "Suggestions")),
    h("section", { "aria-labelledby": "tasks-heading" },
      h("h2", { id: "tasks-heading" }, `Tasks (${tasks.tasks.length})`),
      tasks.tasks.length
        ? h("ol", { class: "plain made-list", id: "task-list" }, tasks.tasks.map((task) => h("li", { class: "card made-item", dataset: { task: task.task_id } },
            h("div", { class: "row spread" }, h("h3", null, task.title), h("span", { class: "row" }, h("span", { class: "badge status" }, task.status), timeEl(task.created_at))),
            task.detail && h("p", null, task.detail),
            task.suggestion_id && h("p", { class: "muted small-text" }, `From suggestion ${task.suggestion_id.slice(0, 8)}`))))
        : h("p", { class: "muted" }, "No tasks yet. Accepting an open-item suggestion makes one (paused).")),
    h("section", { "aria-labelledby": "memories-heading" },
      h("h2", { id: "memories-heading" }, `Memories (${memories.memories.length})`),
      memories.memories.length
        ? h("ol", { class: "plain made-list", id: "memory-list" }, memories.memories.map((memory) => h("li", { class: "card made-item", dataset: { memory: memory.memory_id } },
            h("p", null, memory.text),
            h("p", { class: "muted small-text" },
              memory.suggestion_id ? `From suggestion ${memory.suggestion_id.slice(0, 8)}` : "Confirmed from a finding",
              memory.entity_id ? [" · ", h("a", { href: `#/graph${query({ select: `entity:${memory.entity_id}` })}` }, "its entity")] : "",
              " · ", timeEl(memory.created_at)))))
        : h("p", { class: "muted" }, "No memories yet. Accepting a convention, or confirming a finding's memory, records one."))));
}
