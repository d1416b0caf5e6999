// The story graph's two views of one result: the timeline (events by day, same-day
// events clustered, entity and relation chips that highlight what they touch) and the
// list (every object in tables). Both only build DOM; the page owns the state.

import { h, replace, timeEl } from "../dom.js";
import { dayLabel, groupByDay, sourceKey, touchedEvents } from "./graph-model.js";

/**
 * @typedef {{ type: string, id: string }} Selection
 * @typedef {{ select: (selection: Selection) => void, open: (selection: Selection) => void,
 *             expanded: Set<string> }} ViewHandlers
 */

/** A button that selects an entity or relation (pressed while selected). */
function chip(type, id, label, state, handlers) {
  return h("button", {
    type: "button",
    class: `chip state-${state}`,
    "aria-pressed": "false",
    dataset: { selectType: type, selectId: id },
    on: { click: () => handlers.select({ type, id }) },
  }, label);
}

function entityNames(graph) {
  return new Map(graph.entities.map((e) => [e.entity_id, e.name]));
}

function relationLabel(relation, names) {
  const name = (id) => names.get(id) ?? id.slice(0, 8);
  return `${name(relation.from_entity_id)} ${relation.type} ${name(relation.to_entity_id)}`;
}

function timeOnly(iso) {
  if (!iso) return h("span", { class: "muted" }, "no time");
  const date = new Date(iso);
  return h("time", { datetime: iso, title: iso, class: "mono" },
    date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
}

/** The timeline panel's content for a (possibly replayed) graph. */
export function timelineView(graph, handlers) {
  const names = entityNames(graph);
  const entities = [...graph.entities].sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
  const days = groupByDay(graph.events);
  return [
    h("div", { class: "chip-groups" },
      h("details", { open: true },
        h("summary", null, `Entities (${entities.length}) and relations (${graph.relations.length}): select one to highlight its events`),
        entities.length
          ? byKind(entities).map(([kind, group]) => h("div", { class: "kind-row" },
              h("span", { class: "kind-label", id: kindId(kind) }, kind.replaceAll("_", " ")),
              h("div", { class: "chips", role: "group", "aria-labelledby": kindId(kind) },
                group.map((e) => chip("entity", e.entity_id, e.name, e.state, handlers)))))
          : h("p", { class: "muted" }, "No entities known at this moment."),
        graph.relations.length > 0 && h("div", { class: "kind-row" },
          h("span", { class: "kind-label", id: "kind-relations" }, "relations"),
          h("div", { class: "chips", role: "group", "aria-labelledby": "kind-relations" },
            graph.relations.map((r) => chip("relation", r.relation_id, relationLabel(r, names), r.state, handlers)))))),
    h("p", { class: "muted selection-note", id: "selection-note", "aria-live": "polite" }),
    days.length
      ? h("ol", { class: "timeline plain", "aria-label": "Events by day" }, days.map((day) => dayItem(day, names, handlers)))
      : h("p", { class: "muted" }, "No events known at this moment."),
  ];
}

function kindId(kind) {
  return `kind-${kind.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

function byKind(entities) {
  /** @type {Map<string, any[]>} */
  const groups = new Map();
  for (const entity of entities) {
    if (!groups.has(entity.kind)) groups.set(entity.kind, []);
    groups.get(entity.kind).push(entity);
  }
  return [...groups.entries()];
}

function dayItem(day, names, handlers) {
  const listId = `day-${day.key}`;
  const clustered = day.events.length > 1;
  const failed = day.events.filter((e) => e.outcome === "failed").length;
  const list = h("ol", { class: "events plain", id: listId, hidden: clustered && !handlers.expanded.has(day.key) },
    day.events.map((event) => eventItem(event, names, handlers)));
  const heading = h("h3", { class: "day-label" }, dayLabel(day.key));
  if (!clustered) {
    return h("li", { class: "day", dataset: { day: day.key } }, h("div", { class: "day-head row" }, heading), list);
  }
  const toggle = h("button", {
    type: "button",
    class: "cluster-toggle",
    "aria-expanded": String(!list.hidden),
    "aria-controls": listId,
    on: { click: () => setExpanded(toggle, list, list.hidden, handlers.expanded, day.key) },
  }, `${day.events.length} events`);
  return h("li", { class: "day cluster", dataset: { day: day.key } },
    h("div", { class: "day-head row" },
      heading,
      toggle,
      failed > 0 && h("span", { class: "badge outcome-failed" }, `${failed} failed`),
      h("span", { class: "badge match", hidden: true })),
    list);
}

function setExpanded(toggle, list, expanded, memory, key) {
  list.hidden = !expanded;
  toggle.setAttribute("aria-expanded", String(expanded));
  if (expanded) memory.add(key);
  else memory.delete(key);
}

function eventItem(event, names, handlers) {
  const failed = event.outcome === "failed";
  return h("li", { class: `event${failed ? " failed" : ""}`, dataset: { event: event.event_id } },
    h("div", { class: "row event-head" },
      timeOnly(event.occurred_at),
      h("span", { class: "badge" }, event.kind.replaceAll("_", " ")),
      failed && h("span", { class: "badge outcome-failed" }, "failed"),
      h("button", { type: "button", class: "linkish", on: { click: () => handlers.open({ type: "event", id: event.event_id }) } }, event.title)),
    event.entity_ids.length > 0 && h("div", { class: "chips small" },
      event.entity_ids.filter((id) => names.has(id)).map((id) => chip("entity", id, names.get(id), "plain", handlers))));
}

/**
 * Mark the selection: pressed chips, highlighted events (the rest dimmed), and each
 * day cluster holding a highlighted event expanded with a count of them.
 */
export function applySelection(root, graph, selection) {
  const touched = touchedEvents(graph, selection);
  for (const button of root.querySelectorAll("[data-select-type]")) {
    const el = /** @type {HTMLElement} */ (button);
    const pressed = !!selection && el.dataset.selectType === selection.type && el.dataset.selectId === selection.id;
    el.setAttribute("aria-pressed", String(pressed));
  }
  for (const item of root.querySelectorAll(".event[data-event]")) {
    const el = /** @type {HTMLElement} */ (item);
    const hit = touched.has(el.dataset.event ?? "");
    el.classList.toggle("highlight", !!selection && hit);
    el.classList.toggle("dimmed", !!selection && !hit);
  }
  for (const day of root.querySelectorAll(".day.cluster")) {
    const hits = day.querySelectorAll(".event.highlight").length;
    const badge = /** @type {HTMLElement | null} */ (day.querySelector(".badge.match"));
    if (badge) {
      badge.hidden = hits === 0;
      badge.textContent = `${hits} highlighted`;
    }
    const list = /** @type {HTMLElement | null} */ (day.querySelector("ol.events"));
    const toggle = day.querySelector(".cluster-toggle");
    if (hits > 0 && list && toggle && list.hidden) {
      list.hidden = false;
      toggle.setAttribute("aria-expanded", "true");
    }
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
  const names = entityNames(graph);
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
