// The story graph's lists: the events under the timeline chart (newest day first, the
// chart's equivalent for the keyboard), the list tab (every object in tables), and the
// selection marks shared by the chart, the lists and the entity panel. Only DOM; the
// page owns the state.

import { h, replace, timeEl } from "../dom.js";
import { relationLabel } from "./graph-entities.js";
import { dayLabel, episodes, eventsOfGrain, groupByDay, outcomeLabel, sourceKey, touchedEvents } from "./graph-model.js";

/**
 * @typedef {{ type: string, id: string }} Selection
 * @typedef {{ select: (selection: Selection) => void, open: (selection: Selection) => void,
 *             more: () => void, toggle: (id: string) => void }} ViewHandlers
 */

let clock = null;

function timeOnly(iso) {
  if (!iso) return h("span", { class: "muted" }, "no time");
  clock ??= new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return h("time", { datetime: iso, title: iso, class: "mono" }, clock.format(new Date(iso)));
}

const SHOWN = 150;

/**
 * The events under the chart, newest day first: the chart's equivalent for the keyboard
 * and screen readers, filtered by the brushed window. `context.limit` caps the rows drawn
 * ("Show all" raises it); `context.outcome` and `context.lines` come from the whole graph.
 * At the "episodes" grain (`context.grain`) the rows are the episodes, the sub-agents'
 * runs folded (one row each, as in the chart) and the events neither holds; an episode's
 * or a run's button opens its events in place (`context.expanded`, `context.groups`: the
 * shown graph's `episodes`).
 */
export function eventList(graph, handlers, context) {
  const byGrain = context.grain === "episodes";
  const rows = byGrain ? foldRuns(graph, eventsOfGrain(graph, "episodes"), context) : graph.events;
  const days = groupByDay(rows).reverse();
  const timed = days.filter((day) => day.key !== "undated");
  const undated = days.filter((day) => day.key === "undated");
  let budget = context.limit ?? SHOWN;
  const total = rows.length;
  const items = [];
  for (const day of [...timed, ...undated]) {
    if (budget <= 0) break;
    const events = [...day.events].reverse().slice(0, budget);
    budget -= events.length;
    items.push(h("li", { class: "day", dataset: { day: day.key } },
      h("h3", { class: "day-label" }, dayLabel(day.key), h("span", { class: "muted day-count" }, ` · ${day.events.length} ${byGrain ? "row" : "event"}${day.events.length === 1 ? "" : "s"}`)),
      h("ol", { class: "events plain" }, events.map((event) => eventItem(event, handlers, context)))));
  }
  const drawn = Math.min(total, context.limit ?? SHOWN);
  const what = byGrain ? "Episodes and other events" : "Events";
  return [
    h("h2", { class: "list-title", id: "event-list-title" }, context.window ? `${what} in the window (${total})` : `${what} (${total})`),
    total === 0
      ? h("p", { class: "muted" }, context.window ? "No events in the selected window." : "No events known at this moment.")
      : h("ol", { class: "timeline plain", "aria-labelledby": "event-list-title" }, items),
    drawn < total && h("button", { type: "button", id: "events-more", on: { click: () => handlers.more() } },
      `Show all ${total} ${byGrain ? "rows" : "events"} (${drawn} shown)`),
  ];
}

/** The rows with each folded run's events as one row (at its first event's time). */
function foldRuns(graph, events, context) {
  const runOf = new Map();
  for (const line of graph.story_lines) {
    if (!context.groups.runs.has(line.story_line_id) || context.expanded.has(line.story_line_id)) continue;
    for (const id of line.event_ids) runOf.set(id, line);
  }
  if (!runOf.size) return events;
  const runs = new Map();
  const rows = [];
  for (const event of events) {
    const line = runOf.get(event.event_id);
    if (!line) {
      rows.push(event);
      continue;
    }
    if (!runs.has(line.story_line_id)) {
      const row = { event_id: `run:${line.story_line_id}`, kind: "run", run: line, events: [], occurred_at: event.occurred_at };
      runs.set(line.story_line_id, row);
      rows.push(row);
    }
    const row = runs.get(line.story_line_id);
    row.events.push(event);
    if (event.occurred_at && (!row.occurred_at || event.occurred_at < row.occurred_at)) row.occurred_at = event.occurred_at;
  }
  return rows;
}

/** A folded run's row: its story line's title, how many events, a button opening them. */
function runItem(row, handlers) {
  const count = `${row.events.length} event${row.events.length === 1 ? "" : "s"}`;
  return h("li", { class: "event run", dataset: { run: row.run.story_line_id, events: row.events.map((e) => e.event_id).join(" ") } },
    h("div", { class: "row event-head" },
      timeOnly(row.occurred_at),
      h("span", { class: "badge" }, "sub-agent run"),
      h("span", { class: "title" }, row.run.title || "Untitled story line")),
    h("div", { class: "row episode-outcome" },
      row.run.summary && h("span", { class: "small-text" }, row.run.summary),
      h("button", { type: "button", class: "linkish episode-toggle", "aria-expanded": "false",
        on: { click: () => handlers.toggle(row.run.story_line_id) } }, `Show its ${count}`)));
}

function eventItem(event, handlers, context) {
  if (event.kind === "run" && event.run) return runItem(event, handlers);
  const outcome = context.outcome.get(event.event_id) ?? event.outcome;
  const failed = outcome === "open" || outcome === "fixed" || event.outcome === "failed";
  const line = event.story_line_ids.map((id) => context.lines.get(id)).find(Boolean);
  const group = context.grain === "episodes" && event.kind === "episode" ? context.groups?.byEpisode.get(event.event_id) : null;
  const open = !!group && context.expanded.has(event.event_id);
  const work = group ? group.members.filter((member) => context.inView(member)) : [];
  return h("li", { class: `event${failed ? " failed" : ""} outcome-${outcome}${group ? " episode" : ""}`, dataset: { event: event.event_id } },
    h("div", { class: "row event-head" },
      timeOnly(event.occurred_at),
      h("span", { class: "badge" }, event.kind.replaceAll("_", " ")),
      failed && h("span", { class: `badge outcome-${outcome === "fixed" ? "fixed" : "failed"}` }, outcomeLabel(outcome)),
      h("button", { type: "button", class: "linkish", on: { click: () => handlers.open({ type: "event", id: event.event_id }) } }, event.title)),
    group && h("div", { class: "row episode-outcome" },
      h("span", { class: "small-text" }, event.summary),
      work.length > 0 && h("button", {
        type: "button", class: "linkish episode-toggle", "aria-expanded": String(open),
        on: { click: () => handlers.toggle(event.event_id) },
      }, open ? `Fold its ${work.length} event${work.length === 1 ? "" : "s"}` : `Show its ${work.length} event${work.length === 1 ? "" : "s"}`)),
    line && h("div", { class: "muted small-text lane-name" }, line),
    open && h("ol", { class: "events plain episode-work", "aria-label": `The work of “${event.title}”` },
      work.map((member) => eventItem(member, handlers, { ...context, grain: "events" }))));
}

/**
 * Mark the selection: pressed chips, highlighted events in the list and marks in every
 * lane of the chart (the rest dimmed), and a note of how many events it touches.
 */
export function applySelection(root, graph, selection) {
  const touched = touchedEvents(graph, selection);
  for (const button of root.querySelectorAll("[data-select-type]")) {
    const el = /** @type {HTMLElement} */ (button);
    const pressed = !!selection && el.dataset.selectType === selection.type && el.dataset.selectId === selection.id;
    el.setAttribute("aria-pressed", String(pressed));
  }
  // A folded run's row is marked when one of its events is (never faded: its text stays
  // at full contrast).
  for (const item of root.querySelectorAll(".event.run[data-events]")) {
    const el = /** @type {HTMLElement} */ (item);
    el.classList.toggle("highlight", !!selection && (el.dataset.events ?? "").split(" ").some((id) => touched.has(id)));
  }
  for (const item of root.querySelectorAll(".event[data-event]")) {
    const el = /** @type {HTMLElement} */ (item);
    const hit = touched.has(el.dataset.event ?? "");
    el.classList.toggle("highlight", !!selection && hit);
    el.classList.toggle("dimmed", !!selection && !hit);
  }
  for (const mark of root.querySelectorAll(".event-mark[data-event]")) {
    const hit = touched.has(mark.getAttribute("data-event") ?? "");
    mark.classList.toggle("highlight", !!selection && hit);
    mark.classList.toggle("dimmed", !!selection && !hit);
  }
  // A folded run is hit when one of its events is.
  for (const mark of root.querySelectorAll(".run-mark[data-events]")) {
    const hit = (mark.getAttribute("data-events") ?? "").split(" ").some((id) => touched.has(id));
    mark.classList.toggle("highlight", !!selection && hit);
    mark.classList.toggle("dimmed", !!selection && !hit);
  }
  const note = root.querySelector("#selection-note");
  if (note) {
    replace(note, ...(selection && selection.type !== "event"
      ? [`${touched.size} of ${graph.events.length} events involve the selected ${selection.type}. `,
          h("button", { type: "button", class: "linkish", on: { click: showDetail } }, "Go to its details")]
      : []));
  }
}

function showDetail() {
  const detail = document.getElementById("graph-detail");
  if (!detail) return;
  detail.scrollIntoView({ block: "start" });
  // Still loading: the detail panel focuses its heading once it has one.
  if (detail.dataset.loading === "true") detail.dataset.focusWhenLoaded = "true";
  else /** @type {HTMLElement | null} */ (detail.querySelector("h2"))?.focus({ preventScroll: true });
}

/** The list panel: every object of the (possibly replayed) graph, each opening its detail. */
export function listView(graph, handlers) {
  const names = new Map(graph.entities.map((e) => [e.entity_id, e.name]));
  const open = (type, id, label) => h("button", { type: "button", class: "linkish", dataset: { openType: type, openId: id },
    on: { click: () => handlers.open({ type, id }) } }, label);
  const table = (caption, headers, rows) => h("section", { class: "list-section" },
    h("h3", null, `${caption} (${rows.length})`),
    rows.length
      ? h("div", { class: "table-wrap" }, h("table", null,
          h("thead", null, h("tr", null, headers.map((text) => h("th", { scope: "col" }, text)))),
          h("tbody", null, rows)))
      : h("p", { class: "muted" }, `No ${caption.toLowerCase()} at this moment.`));
  const count = (object) => h("td", { class: "mono" }, String(object.source_count));
  return [
    table("Entities", ["Name", "Kind", "State", "Sources"], graph.entities.map((e) => h("tr", null,
      h("td", null, open("entity", e.entity_id, e.name)), h("td", null, e.kind), h("td", null, stateBadge(e.state)), count(e)))),
    table("Relations", ["Relation", "State", "Sources"], graph.relations.map((r) => h("tr", null,
      h("td", null, open("relation", r.relation_id, relationLabel(r, names))), h("td", null, stateBadge(r.state)), count(r)))),
    table("Changes", ["Change", "Entity", "State", "Sources"], graph.changes.map((c) => h("tr", null,
      h("td", null, open("entity_change", c.change_id, c.description || c.kind)), h("td", null, names.get(c.entity_id) ?? ""),
      h("td", null, stateBadge(c.state)), count(c)))),
    table("Events", ["When", "Event", "Outcome", "Sources"], [...graph.events].reverse().map((e) => h("tr", null,
      h("td", null, timeEl(e.occurred_at)), h("td", null, open("event", e.event_id, e.title)), h("td", null, e.outcome), count(e)))),
    table("Open items", ["Item", "Status", "Sources"], graph.open_items.map((o) => h("tr", null,
      h("td", null, h("span", { class: "title" }, o.title), o.detail && h("div", { class: "muted small-text" }, o.detail),
        citedSources(graph, o.sources)),
      h("td", null, h("span", { class: `badge status-${o.status}` }, o.status)), count(o)))),
  ];
}

/** The excerpts of sources an object cites, folded (open items have no detail panel). */
function citedSources(graph, refs) {
  const seen = new Set();
  const excerpts = refs.map((ref) => graph.sources[sourceKey(ref)])
    .filter((source) => source && !seen.has(sourceKey(source)) && seen.add(sourceKey(source)));
  if (!excerpts.length) return null;
  return h("details", { class: "cited" },
    h("summary", null, `Sources (${excerpts.length})`),
    h("ul", { class: "plain" }, excerpts.map((source) => h("li", null,
      h("div", { class: "small-text" }, h("strong", null, source.title || source.source_type), " · ", timeEl(source.occurred_at)),
      source.exists ? h("pre", { class: "excerpt" }, source.excerpt) : h("p", { class: "muted" }, "Deleted since the review.")))));
}

/** A badge for an object's state (automatic, confirmed, revised, removed, revoked). */
export function stateBadge(state) {
  return h("span", { class: `badge state-badge state-${state}` }, state);
}
