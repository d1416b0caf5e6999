// The story graph (SPEC UI-3, UI-5): one published result as a timeline of events by
// day (same-day events clustered) or as a list of its objects; entity and relation
// selection highlights what they touch; a replay slider shows what was known at a past
// moment; the detail panel shows an object with its sources and a person's edits; the
// continue-discussion card drafts a prompt from the result.

import { guardLeaving, go } from "../app.js";
import { Superseded, latest, query } from "../api.js";
import { errorBox, h, replace, timeEl, when } from "../dom.js";
import { ContinueCard } from "./graph-continue.js";
import { DetailPanel } from "./graph-detail.js";
import { asKnownAt, dayKey, moments } from "./graph-model.js";
import { applySelection, listView, timelineView } from "./graph-timeline.js";

const EVENTS = 500;
const TABS = [["timeline", "Timeline"], ["list", "List"]];

export const routes = [
  { pattern: /^\/graph$/, section: "graph", title: "Story graph", render: graphPage },
  { pattern: /^\/graph\/([^/?]+)$/, section: "graph", title: "Story graph", render: graphPage },
];

async function graphPage({ main, params: [ref], query: params, signal }) {
  const listed = await latest("graph:results", `/results${query({ limit: 50 })}`);
  // Another page or result was asked for meanwhile: this one must not show.
  if (signal.aborted) return;
  if (listed.results.length === 0 && !ref) {
    replace(main, h("h1", null, "Story graph"),
      h("p", { class: "muted" }, "No published results yet. Start a review on the Reviews page (or run `proctor review run`); its story graph shows here."));
    return;
  }
  const resultRef = ref ?? listed.results[0].result_id;
  const asPublished = params.get("as_published") === "1";
  const graph = await loadGraph(resultRef, asPublished);
  if (signal.aborted) return;
  new GraphPage(main, listed.results, graph, asPublished, params.get("tab") === "list" ? "list" : "timeline");
}

function loadGraph(resultRef, asPublished) {
  return latest("graph", `/results/${encodeURIComponent(resultRef)}/graph${query({ limit: EVENTS, as_published: asPublished ? "true" : null })}`);
}

function resultLabel(result) {
  return `${when(result.created_at)} · ${result.project_name ?? "global"} · ${result.trigger} · ${result.result_id.slice(0, 8)}`;
}

class GraphPage {
  constructor(main, results, graph, asPublished, tab) {
    this.graph = graph;
    this.resultId = graph.result.result_id;
    this.asPublished = asPublished;
    this.tab = tab;
    /** @type {null | { type: string, id: string }} */
    this.selection = null;
    /** @type {null | number} index into the replay moments; null: now */
    this.momentIndex = null;
    this.expanded = new Set();
    this.handlers = {
      select: (selection) => this.select(selection),
      open: (selection) => this.open(selection),
      expanded: this.expanded,
    };
    this.summary = h("div", { class: "graph-summary" });
    this.replay = h("div", { class: "replay card" });
    this.panels = {
      timeline: h("div", { id: "panel-timeline", role: "tabpanel", "aria-labelledby": "tab-timeline", tabindex: "0", class: "tabpanel" }),
      list: h("div", { id: "panel-list", role: "tabpanel", "aria-labelledby": "tab-list", tabindex: "0", class: "tabpanel" }),
    };
    const detail = h("section", { class: "card detail", "aria-label": "Details", id: "graph-detail" });
    const discussion = h("section", { class: "card continue", "aria-label": "Continue the discussion", id: "graph-continue" });
    this.detail = new DetailPanel(detail, this.resultId, {
      onEdited: () => this.reload(),
      onContinue: (entity) => this.continueCard.focusOn(entity),
      onSelect: (selection) => this.select(selection),
      names: () => new Map(this.graph.entities.map((e) => [e.entity_id, e.name])),
    });
    this.continueCard = new ContinueCard(discussion, this.resultId);
    guardLeaving(() => this.continueCard.isDirty());
    this.tablist = this.tabs();
    replace(main,
      h("h1", null, "Story graph"),
      this.picker(results),
      this.summary,
      this.replay,
      h("div", { class: "graph-layout" },
        h("div", { class: "graph-main" }, this.tablist, this.panels.timeline, this.panels.list),
        h("div", { class: "graph-side" }, detail, discussion)));
    this.draw();
  }

  picker(results) {
    const known = results.some((r) => r.result_id === this.resultId);
    const options = (known ? results : [this.graph.result, ...results]).map((r) =>
      h("option", { value: r.result_id, selected: r.result_id === this.resultId }, resultLabel(r)));
    const select = h("select", { id: "graph-result", on: { change: (event) => go(`/graph/${encodeURIComponent(/** @type {HTMLSelectElement} */ (event.target).value)}`) } }, options);
    const published = h("button", {
      type: "button", role: "switch", class: "switch", id: "as-published", "aria-checked": String(this.asPublished),
      on: { click: () => this.setPublished(!this.asPublished) },
    }, h("span", { class: "track", "aria-hidden": "true" }), "As published");
    this.publishedSwitch = published;
    return h("div", { class: "row picker" },
      h("label", { for: "graph-result" }, "Result"), select, published);
  }

  tabs() {
    const buttons = TABS.map(([name, label]) => h("button", {
      type: "button", role: "tab", id: `tab-${name}`, "aria-controls": `panel-${name}`,
      on: { click: () => this.setTab(name), keydown: (event) => this.tabKey(event) },
    }, label));
    return h("div", { role: "tablist", "aria-label": "Views", class: "tabs" }, buttons);
  }

  tabKey(event) {
    const order = TABS.map(([name]) => name);
    const at = order.indexOf(this.tab);
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: order.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    this.setTab(order[(next + order.length) % order.length]);
    document.getElementById(`tab-${this.tab}`)?.focus();
  }

  setTab(name) {
    this.tab = name;
    for (const [tabName] of TABS) {
      const tab = /** @type {HTMLElement} */ (document.getElementById(`tab-${tabName}`));
      const selected = tabName === name;
      tab.setAttribute("aria-selected", String(selected));
      tab.setAttribute("tabindex", selected ? "0" : "-1");
      this.panels[tabName].hidden = !selected;
    }
  }

  async setPublished(on) {
    this.asPublished = on;
    this.publishedSwitch.setAttribute("aria-checked", String(on));
    await this.reload();
  }

  async reload() {
    try {
      this.graph = await loadGraph(this.resultId, this.asPublished);
    } catch (error) {
      if (error instanceof Superseded) return;
      this.summary.appendChild(errorBox(error));
      return;
    }
    this.draw();
  }

  /** The graph as the replay slider shows it. */
  shown() {
    const times = moments(this.graph);
    if (this.momentIndex !== null && this.momentIndex >= times.length) this.momentIndex = null;
    return asKnownAt(this.graph, this.momentIndex === null ? null : times[this.momentIndex]);
  }

  draw() {
    const shown = this.shown();
    if (!this.openedNewestDay) {
      // The newest day starts open; older days stay folded into their clusters.
      const newest = shown.events.map((e) => dayKey(e.occurred_at)).filter((key) => key !== "undated").pop();
      if (newest) this.expanded.add(newest);
      this.openedNewestDay = true;
    }
    this.drawSummary(shown);
    this.drawReplay(shown);
    replace(this.panels.timeline, timelineView(shown, this.handlers));
    replace(this.panels.list, listView(shown, this.handlers));
    this.setTab(this.tab);
    this.mark(shown);
  }

  mark(shown) {
    if (this.selection && !present(shown, this.selection)) this.selection = null;
    applySelection(this.panels.timeline, shown, this.selection);
    applySelection(this.panels.list, shown, this.selection);
  }

  drawSummary(shown) {
    const { result, totals } = this.graph;
    const counts = [
      ["event", "events", shown.events.length, totals.events],
      ["entity", "entities", shown.entities.length, totals.entities],
      ["relation", "relations", shown.relations.length, totals.relations],
      ["change", "changes", shown.changes.length, totals.changes],
      ["open item", "open items", shown.open_items.length, totals.open_items],
    ].map(([one, many, count, total]) => {
      const label = total === 1 ? one : many;
      return count === total ? `${total} ${label}` : `${count} of ${total} ${label}`;
    });
    replace(this.summary,
      result.summary && h("p", { class: "result-summary" }, result.summary),
      h("p", { class: "muted" }, `${result.project_name ?? "global"} · ${result.trigger} · published `, timeEl(result.created_at),
        ` · ${counts.join(" · ")}`),
      this.asPublished && h("p", { class: "notice" }, "As published: names, states and reasons as this result said them then; a person's later edits are not shown here."),
      this.graph.events.length < totals.events && h("p", { class: "notice" },
        `Showing the newest ${this.graph.events.length} of ${totals.events} events (and what they involve).`));
  }

  drawReplay(shown) {
    const times = moments(this.graph);
    const max = times.length;
    const value = this.momentIndex ?? max;
    const slider = h("input", {
      type: "range", id: "replay", min: "0", max: String(max), step: "1", value: String(value),
      "aria-valuetext": this.momentIndex === null ? "now" : new Date(times[value]).toISOString(),
      on: { input: (event) => {
        const index = Number(/** @type {HTMLInputElement} */ (event.target).value);
        this.momentIndex = index >= max ? null : index;
        this.redrawAfterReplay();
      } },
    });
    this.slider = slider;
    replace(this.replay,
      h("div", { class: "row spread" },
        h("label", { for: "replay" }, "Replay to a past moment"),
        h("output", { for: "replay", id: "replay-moment" },
          this.momentIndex === null ? "Now: everything this result holds" : h("span", null, "As known at ", timeEl(new Date(times[value]).toISOString())))),
      slider,
      h("div", { class: "row spread" },
        h("p", { class: "muted small-text" },
          "Replay filters this result's facts by their recorded times (an event by when it happened, anything else by the earliest source it cites); ",
          "the API keeps no older versions of them. Facts without a recorded time show only at “now”."),
        this.momentIndex !== null && h("button", { type: "button", id: "replay-now", on: { click: () => {
          this.momentIndex = null;
          this.redrawAfterReplay();
          document.getElementById("replay")?.focus();
        } } }, "Back to now")),
      shown.events.length === 0 && this.graph.events.length > 0 && h("p", { class: "muted" }, "Nothing was known yet at this moment."));
  }

  redrawAfterReplay() {
    const focusedId = document.activeElement?.id;
    this.draw();
    if (focusedId) document.getElementById(focusedId)?.focus();
  }

  select(selection) {
    const same = this.selection && this.selection.type === selection.type && this.selection.id === selection.id;
    this.selection = same ? null : selection;
    this.mark(this.shown());
    if (this.selection) this.detail.show(this.selection.id);
  }

  open(selection) {
    this.selection = selection;
    this.mark(this.shown());
    this.detail.show(selection.id, { focus: true });
    if (window.innerWidth <= 800) document.getElementById("graph-detail")?.scrollIntoView({ block: "start" });
  }
}

function present(graph, selection) {
  const lists = { entity: [graph.entities, "entity_id"], relation: [graph.relations, "relation_id"],
    event: [graph.events, "event_id"], entity_change: [graph.changes, "change_id"] }[selection.type];
  return !!lists && lists[0].some((item) => item[lists[1]] === selection.id);
}
