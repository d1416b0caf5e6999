// The story graph's entity panel: a collapsible, searchable side panel of the graph's
// entities grouped by kind, the kinds with most entities first and in each the entities
// involved in most events first, with counts; then the relations. Each entity is a chip
// that selects it (the page highlights its events across the timeline's lanes).

import { h, replace } from "../dom.js";
import { entityGroups } from "./graph-model.js";

const TOP = 12;

function kindId(kind) {
  return `kind-${kind.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** A button that selects an entity or relation (pressed while selected). */
export function chip(type, id, label, state, handlers, count) {
  return h("button", {
    type: "button",
    class: `chip state-${state}`,
    "aria-pressed": "false",
    dataset: { selectType: type, selectId: id },
    on: { click: () => handlers.select({ type, id }) },
  }, label, count !== undefined && h("span", { class: "chip-count", "aria-hidden": "true" }, String(count)));
}

export class EntityPanel {
  /** @param {HTMLElement} container */
  constructor(container, handlers) {
    this.container = container;
    this.handlers = handlers;
    this.query = "";
    /** kinds whose every entity is shown (not only the top ones) */
    this.widened = new Set();
    this.open = true;
    this.body = h("div", { class: "entity-groups" });
    this.search = /** @type {HTMLInputElement} */ (h("input", {
      type: "search", id: "entity-search", autocomplete: "off", placeholder: "Name contains…",
      on: { input: () => {
        this.query = this.search.value.trim().toLowerCase();
        this.fill();
      } },
    }));
  }

  /** Draw the panel for a (possibly replayed) graph. */
  render(graph, names) {
    this.graph = graph;
    this.names = names;
    const details = h("details", { class: "entity-panel", open: this.open, on: { toggle: () => { this.open = details.open; } } },
      h("summary", { class: "panel-title" }, `Entities (${graph.entities.length})`),
      h("div", { class: "entity-search" },
        h("label", { for: "entity-search" }, "Find an entity"),
        this.search),
      h("p", { class: "muted small-text" }, "Select one to highlight its events in every lane."),
      this.body);
    replace(this.container, details);
    this.fill();
  }

  fill() {
    const graph = this.graph;
    const query = this.query;
    const matches = (text) => !query || text.toLowerCase().includes(query);
    const groups = entityGroups(graph).map((group) => ({ ...group, found: group.items.filter((item) => matches(item.entity.name)) }))
      .filter((group) => group.found.length > 0);
    const relations = graph.relations.filter((r) => matches(relationLabel(r, this.names)));
    replace(this.body,
      groups.length === 0 && relations.length === 0 && h("p", { class: "muted" },
        query ? `No entity or relation matches “${this.search.value.trim()}”.` : "No entities known at this moment."),
      groups.map((group) => {
        const wide = query || this.widened.has(group.kind);
        const shown = wide ? group.found : group.found.slice(0, TOP);
        const count = query ? `${group.found.length} of ${group.items.length}` : String(group.items.length);
        return h("section", { class: "kind-group", dataset: { kind: group.kind } },
          h("h3", { class: "kind-label", id: kindId(group.kind) }, `${group.kind.replaceAll("_", " ")} (${count})`),
          h("div", { class: "chips", role: "group", "aria-labelledby": kindId(group.kind) },
            shown.map((item) => chip("entity", item.entity.entity_id, item.entity.name, item.entity.state, this.handlers, item.events))),
          shown.length < group.found.length && h("button", { type: "button", class: "linkish more", on: { click: () => {
            this.widened.add(group.kind);
            this.fill();
            this.handlers.refreshSelection();
          } } }, `Show all ${group.found.length}`));
      }),
      relations.length > 0 && h("section", { class: "kind-group" },
        h("h3", { class: "kind-label", id: "kind-relations" }, `relations (${relations.length})`),
        h("div", { class: "chips", role: "group", "aria-labelledby": "kind-relations" },
          relations.map((r) => chip("relation", r.relation_id, relationLabel(r, this.names), r.state, this.handlers)))));
    this.handlers.refreshSelection();
  }
}

export function relationLabel(relation, names) {
  const name = (id) => names.get(id) ?? id.slice(0, 8);
  return `${name(relation.from_entity_id)} ${relation.type} ${name(relation.to_entity_id)}`;
}
