// The story graph (SPEC UI-3, UI-5). By default the scope's whole graph as of the chosen
// result (every review of the scope up to it, merged: `cumulative=true`), with "only this
// review's changes" as a filter. The timeline tab is a d3 chart (graph-chart.js) of one
// lane per story line with zoom, pan and a brushed window that filters the event list
// under it. It shows episodes by default (a user's request and the work it caused, with
// its outcome line); one click on an episode opens its single events in place (in the
// chart and in the list), and a switch shows every single event (`?grain=events`). It
// opens on the busiest stretch of time; "Show all time" zooms out. The entity panel beside it highlights an entity's events across lanes; a
// replay slider moves a cursor along the axis and shows what was known then; the detail
// panel shows an object with its sources and a person's edits; the continue-discussion
// card drafts a prompt from the result.

import { guardLeaving, go } from "../app.js";
import { Superseded, get, latest, query } from "../api.js";
import { errorBox, h, replace, timeEl, when } from "../dom.js";
import { TimelineChart, loadD3 } from "./graph-chart.js";
import { ContinueCard } from "./graph-continue.js";
import { DetailPanel } from "./graph-detail.js";
import { EntityPanel } from "./graph-entities.js";
import { asKnownAt, episodes, inWindow, moments, outcomes } from "./graph-model.js";
import { applySelection, eventList, listView } from "./graph-timeline.js";

const EVENTS = 500;
const TABS = [["timeline", "Timeline"], ["list", "List"]];

export const routes = [
  { pattern: /^\/graph$/, section: "graph", title: "Story graph", render: graphPage },
  { pattern: /^\/graph\/([^/?]+)$/, section: "graph", title: "Story graph", render: graphPage },
];

async function graphPage({ main, params: [ref], query: params, signal }) {
  // The chart's library loads while the page asks for its data.
  const d3 = loadD3().catch((error) => error);
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
  const thisReview = asPublished || params.get("view") === "review";
  const tab = params.get("tab") === "list" ? "list" : "timeline";
  const graph = await loadGraph(resultRef, { asPublished, thisReview, excerpts: tab === "list" });
  if (signal.aborted) return;
  const page = new GraphPage(main, listed.results, graph, { asPublished, thisReview, d3, signal },
    tab, params.get("grain") === "events" ? "events" : "episodes");
  // A link to one object (search results: `#/graph?select=TYPE:ID`) opens it.
  const [type, ...id] = (params.get("select") ?? "").split(":");
  if (type && id.length) page.open({ type, id: id.join(":") });
}

/**
 * The graph to show. The sources' excerpts (a third of a large answer) are asked for only
 * with `excerpts`: the List tab's open items show them; the timeline needs their times only.
 */
async function loadGraph(resultRef, { asPublished, thisReview, excerpts = false, slot = "graph" }) {
  const params = { limit: EVENTS, as_published: asPublished ? "true" : null, cumulative: thisReview ? null : "true",
    excerpts: excerpts ? null : "false" };
  const graph = await latest(slot, `/results/${encodeURIComponent(resultRef)}/graph${query(params)}`);
  return Object.assign(graph, { hasExcerpts: excerpts });
}

function resultLabel(result) {
  return `${when(result.created_at)} · ${result.project_name ?? "global"} · ${result.trigger} · ${result.result_id.slice(0, 8)}`;
}

class GraphPage {
  constructor(main, results, graph, { asPublished, thisReview, d3, signal }, tab, grain) {
    this.results = results;
    this.graph = graph;
    this.resultId = graph.result.result_id;
    this.asPublished = asPublished;
    this.thisReview = thisReview;
    this.signal = signal;
    this.tab = tab;
    /** @type {null | { type: string, id: string }} */
    this.selection = null;
    /** @type {null | number} index into the replay moments; null: now */
    this.momentIndex = null;
    /** @type {null | [number, number]} the brushed window, milliseconds */
    this.window = null;
    this.listLimit = null;
    /** "episodes" (the default) or "events"; the episodes and sub-agent runs opened */
    this.grain = grain;
    this.expanded = new Set();
    this.findings = [];
    this.handlers = {
      select: (selection) => this.select(selection),
      open: (selection) => this.open(selection),
      more: () => {
        this.listLimit = Infinity;
        this.drawLists(this.shown());
      },
      refreshSelection: () => this.root && this.mark(this.shown()),
      toggle: (id) => this.toggle(id),
    };
    this.summary = h("div", { class: "graph-summary" });
    this.replay = h("div", { class: "replay card" });
    this.chartHost = h("div", { class: "chart-host" });
    this.windowNote = h("div", { class: "window-note", "aria-live": "polite" });
    this.zoomNote = h("span", { class: "muted small-text zoom-note", id: "zoom-note" });
    this.eventsHost = h("div", { class: "event-list" });
    this.panels = {
      timeline: h("div", { id: "panel-timeline", role: "tabpanel", "aria-labelledby": "tab-timeline", tabindex: "0", class: "tabpanel" },
        this.toolbar(), this.chartHost, legend(), this.windowNote,
        h("p", { class: "muted selection-note", id: "selection-note", "aria-live": "polite" }),
        this.eventsHost),
      list: h("div", { id: "panel-list", role: "tabpanel", "aria-labelledby": "tab-list", tabindex: "0", class: "tabpanel" }),
    };
    const entities = h("section", { class: "card entities", "aria-label": "Entities", id: "graph-entities" });
    this.entities = new EntityPanel(entities, this.handlers);
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
    this.root = h("div", { class: "graph-page", dataset: { page: "graph" } },
      h("h1", null, "Story graph"),
      this.picker(results),
      this.summary,
      this.replay,
      h("div", { class: "graph-layout" },
        h("div", { class: "graph-main" }, this.tablist, this.panels.timeline, this.panels.list),
        h("div", { class: "graph-side" }, entities, detail, discussion)));
    replace(main, this.root);
    this.draw();
    this.startChart(d3);
  }

  async startChart(d3Loading) {
    const d3 = await d3Loading;
    if (this.signal.aborted || !this.root.isConnected) return;
    if (d3 instanceof Error) {
      replace(this.chartHost, errorBox(d3));
    } else {
      this.chart = new TimelineChart(this.chartHost, d3, {
        open: (selection) => this.open(selection),
        openFinding: (finding) => go(`/conversations/${encodeURIComponent(finding.conversation_id)}?finding=${encodeURIComponent(finding.finding_id)}`),
        brushed: (window) => this.setWindow(window),
        toggle: (id) => this.toggle(id),
        zoomed: (range, whole) => this.noteZoom(range, whole),
      });
      this.chart.setView(this.view());
      this.chart.setGraph(this.graph);
      this.chart.setMoment(this.moment());
      this.mark(this.shown());
      this.signal.addEventListener("abort", () => this.chart?.destroy());
    }
    this.root.dataset.ready = "true";
    this.loadFindings();
  }

  async loadFindings() {
    try {
      const answer = await get(`/results/${encodeURIComponent(this.resultId)}/findings${query({ cumulative: this.thisReview ? null : "true" })}`);
      this.findings = answer.findings;
    } catch {
      this.findings = [];
    }
    if (!this.root.isConnected) return;
    this.chart?.setFindings(this.findings);
    this.mark(this.shown());
    // The findings' lane is drawn (it may widen the axis): tests wait for this.
    this.root.dataset.findings = "shown";
  }

  toolbar() {
    const button = (id, label, action) => h("button", { type: "button", id, on: { click: action } }, label);
    this.grainSwitch = h("button", {
      type: "button", role: "switch", class: "switch", id: "grain-events", "aria-checked": String(this.grain === "events"),
      on: { click: () => this.setGrain(this.grain === "events" ? "episodes" : "events") },
    }, h("span", { class: "track", "aria-hidden": "true" }), "Every single event");
    return h("div", { class: "chart-toolbar" },
      h("div", { class: "row chart-tools", role: "group", "aria-label": "Timeline zoom and window" },
        button("zoom-in", "Zoom in", () => this.chart?.zoomBy(2)),
        button("zoom-out", "Zoom out", () => this.chart?.zoomBy(0.5)),
        button("zoom-all", "Show all time", () => this.chart?.zoomBy(null)),
        button("window-visible", "Window: the visible range", () => this.chart?.selectWindow(this.chart.visible())),
        this.zoomWindow = h("button", { type: "button", id: "zoom-window", disabled: true, on: { click: () => this.window && this.chart?.zoomTo(this.window) } }, "Zoom to the window"),
        this.grainSwitch),
      h("p", { class: "muted small-text chart-hint" },
        this.zoomNote,
        " Episodes: a request and the work it caused; click one to open its events. Drag the lanes to pan; Ctrl + wheel zooms."));
  }

  /** The chart's grain and what is opened in it. */
  view() {
    return { grain: this.grain, expanded: this.expanded };
  }

  setGrain(grain) {
    this.grain = grain;
    this.grainSwitch.setAttribute("aria-checked", String(grain === "events"));
    this.chart?.setView(this.view());
    this.drawLists(this.shown());
  }

  /** Open or fold an episode (its id) or a sub-agent's run (its line's id). */
  toggle(id) {
    const opening = !this.expanded.has(id);
    if (opening) this.expanded.add(id);
    else this.expanded.delete(id);
    this.chart?.setView(this.view());
    const focused = document.activeElement?.closest?.("[data-event]")?.getAttribute("data-event");
    this.drawLists(this.shown());
    if (focused) /** @type {HTMLElement | null} */ (this.eventsHost.querySelector(`[data-event="${CSS.escape(focused)}"] .episode-toggle`))?.focus();
    // An episode opened shows its detail (its outcome line and sources) as well.
    if (opening && episodes(this.shown()).byEpisode.has(id)) this.select({ type: "event", id }, { keep: true });
  }

  /** Open what holds an event (its episode, its folded run) so that it can be seen. */
  reveal(eventId) {
    const shown = this.shown();
    const { ofMember } = episodes(shown);
    const episode = ofMember.get(eventId);
    let changed = false;
    if (episode && !this.expanded.has(episode)) {
      this.expanded.add(episode);
      changed = true;
    }
    const event = shown.events.find((e) => e.event_id === eventId);
    for (const line of event?.story_line_ids ?? []) {
      if (episodes(shown).runs.has(line) && !this.expanded.has(line)) {
        this.expanded.add(line);
        changed = true;
      }
    }
    if (changed) {
      this.chart?.setView(this.view());
      this.drawLists(shown);
    }
  }

  noteZoom([from, to], whole) {
    const day = (ms) => new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
    this.zoomNote.textContent = whole ? "Showing all time." : `Showing ${day(from)} – ${day(to)} (“Show all time” zooms out).`;
  }

  picker(results) {
    const known = results.some((r) => r.result_id === this.resultId);
    const options = (known ? results : [this.graph.result, ...results]).map((r) =>
      h("option", { value: r.result_id, selected: r.result_id === this.resultId }, resultLabel(r)));
    const select = h("select", { id: "graph-result", on: { change: (event) => go(`/graph/${encodeURIComponent(/** @type {HTMLSelectElement} */ (event.target).value)}`) } }, options);
    const switchButton = (id, label, on, action) => h("button", {
      type: "button", role: "switch", class: "switch", id, "aria-checked": String(on), on: { click: action },
    }, h("span", { class: "track", "aria-hidden": "true" }), label);
    this.reviewSwitch = switchButton("this-review", "Only this review's changes", this.thisReview, () => this.setThisReview(!this.thisReview));
    this.publishedSwitch = switchButton("as-published", "As published", this.asPublished, () => this.setPublished(!this.asPublished));
    return h("div", { class: "row picker" },
      h("label", { for: "graph-result" }, "Result"), select, this.reviewSwitch, this.publishedSwitch);
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
    // A chart drawn while hidden had no width: fit it again once shown.
    if (name === "timeline") this.chart?.refit();
    if (name === "list" && this.listed && !this.panels.list.firstChild) {
      replace(this.panels.list, listView(this.listed, this.handlers));
      this.mark(this.shown());
    }
    if (name === "list" && !this.graph.hasExcerpts) this.loadExcerpts();
  }

  /** The sources' excerpts, left out of the first answer, for the List tab: asked for once. */
  async loadExcerpts() {
    const graph = this.graph;
    graph.hasExcerpts = true;
    let full;
    try {
      full = await loadGraph(this.resultId, { asPublished: this.asPublished, thisReview: this.thisReview,
        excerpts: true, slot: "graph:excerpts" });
    } catch (error) {
      graph.hasExcerpts = false;
      if (error instanceof Superseded) return;
      this.panels.list.appendChild(errorBox(error));
      return;
    }
    if (this.graph !== graph || this.signal.aborted) return;  // reloaded or left meanwhile
    graph.sources = full.sources;
    if (this.tab === "list") this.drawLists(this.shown());
  }

  async setPublished(on) {
    this.asPublished = on;
    this.publishedSwitch.setAttribute("aria-checked", String(on));
    if (on && !this.thisReview) {
      // A snapshot is one result's: as published is this review's changes.
      this.thisReview = true;
      this.reviewSwitch.setAttribute("aria-checked", "true");
    }
    await this.reload();
  }

  async setThisReview(on) {
    this.thisReview = on;
    this.reviewSwitch.setAttribute("aria-checked", String(on));
    if (!on && this.asPublished) {
      this.asPublished = false;
      this.publishedSwitch.setAttribute("aria-checked", "false");
    }
    await this.reload();
    this.loadFindings();
  }

  async reload() {
    try {
      this.graph = await loadGraph(this.resultId, { asPublished: this.asPublished, thisReview: this.thisReview,
        excerpts: this.tab === "list" });
    } catch (error) {
      if (error instanceof Superseded) return;
      this.summary.appendChild(errorBox(error));
      return;
    }
    this.draw();
    this.chart?.setGraph(this.graph);
    this.chart?.setMoment(this.moment());
    this.mark(this.shown());
  }

  /** The replay moment (milliseconds) or null for now. */
  moment() {
    const times = moments(this.graph);
    if (this.momentIndex !== null && this.momentIndex >= times.length) this.momentIndex = null;
    return this.momentIndex === null ? null : times[this.momentIndex];
  }

  /** The graph as the replay slider shows it. */
  shown() {
    return asKnownAt(this.graph, this.moment());
  }

  draw() {
    const shown = this.shown();
    this.drawSummary(shown);
    this.drawReplay(shown);
    this.entities.render(shown, new Map(this.graph.entities.map((e) => [e.entity_id, e.name])));
    this.drawLists(shown);
    this.setTab(this.tab);
  }

  /** The event list under the chart and the list tab: the window's events. */
  drawLists(shown) {
    const windowed = inWindow(shown, this.window);
    const lines = new Map(this.graph.story_lines.map((line) => [line.story_line_id, line.title]));
    const inWindowIds = new Set(windowed.events.map((e) => e.event_id));
    replace(this.eventsHost, eventList(windowed, this.handlers, {
      outcome: outcomes(this.graph), lines, window: this.window, limit: this.listLimit,
      grain: this.grain, expanded: this.expanded, groups: episodes(shown), inView: (e) => inWindowIds.has(e.event_id),
    }));
    // The list tab is built when shown (its tables hold every object).
    this.listed = windowed;
    if (this.tab === "list") replace(this.panels.list, listView(windowed, this.handlers));
    else replace(this.panels.list);
    replace(this.windowNote, this.window && [
      h("span", null, "Window: ", timeEl(new Date(this.window[0]).toISOString()), " – ", timeEl(new Date(this.window[1]).toISOString()),
        ` · ${windowed.events.length} of ${shown.events.length} events. `),
      h("button", { type: "button", class: "linkish", id: "window-clear", on: { click: () => (this.chart ? this.chart.selectWindow(null) : this.setWindow(null)) } }, "Clear the window"),
    ]);
    this.mark(shown);
  }

  setWindow(window) {
    this.window = window;
    this.zoomWindow.toggleAttribute("disabled", !window);
    this.drawLists(this.shown());
  }

  mark(shown) {
    if (this.selection && !present(shown, this.selection)) this.selection = null;
    applySelection(this.root, shown, this.selection);
  }

  drawSummary(shown) {
    const { result, totals } = this.graph;
    const counts = [
      ["event", "events", shown.events.length, totals.events],
      ["entity", "entities", shown.entities.length, totals.entities],
      ["story line", "story lines", shown.story_lines.length, totals.story_lines],
      ["relation", "relations", shown.relations.length, totals.relations],
      ["open item", "open items", shown.open_items.length, totals.open_items],
    ].map(([one, many, count, total]) => {
      const label = total === 1 ? one : many;
      return count === total ? `${total} ${label}` : `${count} of ${total} ${label}`;
    });
    const merged = this.results.filter((r) => r.scope_key === result.scope_key && r.created_at <= result.created_at).length;
    replace(this.summary,
      result.summary && h("p", { class: "result-summary" }, result.summary),
      h("p", { class: "muted", id: "graph-scope" },
        this.thisReview
          ? `Only this review's changes · ${result.project_name ?? "global"} · ${result.trigger} · published `
          : `The whole ${result.project_name ? `project ${result.project_name}` : "global"} graph as of this review (${merged} review${merged === 1 ? "" : "s"} merged) · published `,
        timeEl(result.created_at), ` · ${counts.join(" · ")}`),
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
    replace(this.replay,
      h("div", { class: "row spread" },
        h("label", { for: "replay" }, "Replay to a past moment"),
        h("output", { for: "replay", id: "replay-moment" },
          this.momentIndex === null ? "Now: everything this view holds" : h("span", null, "As known at ", timeEl(new Date(times[value]).toISOString())))),
      slider,
      h("div", { class: "row spread" },
        h("p", { class: "muted small-text" },
          "Replay filters this result's facts by their recorded times (an event by when it happened, anything else by the earliest source it cites) ",
          "and moves a cursor along the timeline; the API keeps no older versions of them. Facts without a recorded time show only at “now”."),
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
    this.chart?.setMoment(this.moment());
    if (focusedId) document.getElementById(focusedId)?.focus();
  }

  select(selection, { keep = false } = {}) {
    const same = this.selection && this.selection.type === selection.type && this.selection.id === selection.id;
    this.selection = same && !keep ? null : selection;
    this.mark(this.shown());
    if (this.selection) this.detail.show(this.selection.id);
  }

  open(selection) {
    if (selection.type === "event" && this.grain === "episodes") this.reveal(selection.id);
    this.selection = selection;
    this.mark(this.shown());
    this.detail.show(selection.id, { focus: true });
    if (window.innerWidth <= 800) document.getElementById("graph-detail")?.scrollIntoView({ block: "start" });
  }
}

/** What the marks' colours and rings mean. */
function legend() {
  const item = (cls, label) => h("li", null, h("span", { class: `swatch ${cls}`, "aria-hidden": "true" }), label);
  return h("ul", { class: "plain row chart-legend", "aria-label": "Legend" },
    item("kind", "fill: the event's kind"),
    item("outcome-open", "failed, still open"),
    item("outcome-fixed", "failed, fixed later"),
    item("finding", "finding, at its evidence time"),
    item("cursor", "replay moment"));
}

function present(graph, selection) {
  const lists = { entity: [graph.entities, "entity_id"], relation: [graph.relations, "relation_id"],
    event: [graph.events, "event_id"], entity_change: [graph.changes, "change_id"] }[selection.type];
  return !!lists && lists[0].some((item) => item[lists[1]] === selection.id);
}
