// The story graph's timeline chart (SPEC UI-3): an SVG drawn with d3's modules (scale,
// axis, zoom, brush, selection; vendor/d3.min.js, loaded when the page first needs it).
// One lane per story line, events as marks coloured by kind and ringed by outcome, the
// findings' lane on top at their evidence time; zoom and pan from minutes to months;
// brushing the band under the axis selects a window; the replay moment is a cursor.
// By default a conversation's lane shows its episodes (a request and the work it caused,
// drawn from the request to its last work), a sub-agent's lane its run folded into one
// bar; clicking one opens it into its single events (`grain: "events"` shows them all).
// The chart opens on the busiest stretch of time (`densestWindow`), "Show all time"
// zooms out to everything. The list under the chart holds the same events for the
// keyboard and screen readers.

import { h } from "../dom.js";
import { densestWindow, lanes, millis, outcomeLabel, outcomes } from "./graph-model.js";

const LANE = 24;
const AXIS = 30;
const BAND = 20;
const FINDINGS_LANE = "findings";
const MINUTE = 60_000;
const KIND_COLOURS = 8;
const HOUR = 60 * MINUTE;

let loading = null;
let longTime = null;

/** A date and time in the viewer's zone (one formatter for every mark). */
function stamp(iso) {
  longTime ??= new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  return longTime.format(new Date(iso));
}

/** window.d3 with the modules the chart uses, loading vendor/d3.min.js once. */
export function loadD3() {
  const ready = () => window.d3 && window.d3.zoom && window.d3.brushX;
  if (ready()) return Promise.resolve(window.d3);
  loading ??= new Promise((resolve, reject) => {
    const script = h("script", { src: "/ui/vendor/d3.min.js", on: {
      load: () => (ready() ? resolve(window.d3) : reject(new Error("vendor/d3.min.js lacks d3's zoom or brush"))),
      error: () => {
        loading = null;
        reject(new Error("The timeline's library (vendor/d3.min.js) is missing: run `make ui-assets`."));
      },
    } });
    document.head.appendChild(script);
  });
  return loading;
}

/** The stable colour index of a kind among the graph's kinds (sorted by name). */
function kindIndex(kinds, kind) {
  return kinds.indexOf(kind) % KIND_COLOURS;
}

function clip(text, length) {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

/**
 * The chart in `host`. `handlers.open` opens an event's or a finding's detail;
 * `handlers.brushed([from, to] | null)` reports the selected window;
 * `handlers.toggle(id)` opens or folds an episode (its id) or a sub-agent's run (its
 * line's id); `handlers.zoomed([from, to], whole)` reports the visible range.
 */
export class TimelineChart {
  constructor(host, d3, handlers) {
    this.host = host;
    this.d3 = d3;
    this.handlers = handlers;
    this.graph = null;
    this.findings = [];
    this.window = null;
    this.cursor = null;
    this.transform = d3.zoomIdentity;
    /** @type {null | [number, number]} the visible time range (null: all of it), kept
     * across drawings (the findings arriving may widen the axis) */
    this.range = null;
    /** @type {{ grain: string, expanded: Set<string> }} */
    this.view = { grain: "episodes", expanded: new Set() };
    /** true until the first drawing with times chose the opening zoom */
    this.fitPending = true;
    this.resize = () => this.refit();
    window.addEventListener("resize", this.resize);
  }

  /** Stop listening (the page is left or redrawn with another chart). */
  destroy() {
    window.removeEventListener("resize", this.resize);
  }

  /** Draw again when the host's width changed (a resize, a tab shown again). */
  refit() {
    if (this.graph && this.host.clientWidth > 0 && this.host.clientWidth !== this.width) this.draw();
  }

  setGraph(graph) {
    this.graph = graph;
    this.range = null;
    this.fitPending = true;
    this.draw();
  }

  /** The grain ("episodes" or "events") and the opened episodes and runs; the zoom stays. */
  setView(view) {
    this.view = view;
    if (this.graph) this.draw();
  }

  setFindings(findings) {
    this.findings = findings;
    this.draw();
  }

  /** The x domain: every placed event and finding, padded (at least an hour wide). */
  domain() {
    const times = [
      ...this.graph.events.map((e) => millis(e.occurred_at)),
      ...this.findings.map((f) => millis(f.at)),
    ].filter((t) => t !== null);
    if (!times.length) return null;
    const lo = Math.min(...times);
    const hi = Math.max(...times);
    const pad = Math.max((hi - lo) * 0.02, 30 * MINUTE);
    return [lo - pad, hi + pad];
  }

  draw() {
    if (!this.graph) return;
    const d3 = this.d3;
    const domain = this.domain();
    const host = d3.select(this.host);
    host.selectAll("*").remove();
    if (!domain) {
      host.append("p").attr("class", "muted").text("No event has a recorded time: the list below shows them.");
      return;
    }
    const top = host.append("svg").attr("class", "timeline-axis");
    const scroller = host.append("div").attr("class", "lanes-scroll");
    // The lanes' width leaves room for their scroll bar; the axis above lines up with them.
    const width = Math.max(scroller.node().clientWidth, 280);
    this.width = this.host.clientWidth;
    const narrow = width < 600;
    const left = narrow ? 92 : 190;
    const right = 12;
    const laneList = lanes(this.graph, this.view);
    const rows = [{ id: FINDINGS_LANE, title: `Findings (${this.findings.length})`, depth: 0, events: [] }, ...laneList];
    const height = rows.length * LANE + 6;
    const head = AXIS + BAND;
    const x0 = d3.scaleUtc().domain(domain).range([left, width - right]);
    const kinds = [...new Set(this.graph.events.map((e) => e.kind))].sort();
    const outcome = outcomes(this.graph);
    const laneY = (index) => index * LANE + LANE / 2;
    const span = domain[1] - domain[0];
    this.x0 = x0;

    // The time axis and the brush band stay in view while the lanes scroll under them.
    top
      .attr("width", width)
      .attr("height", head)
      .attr("role", "img")
      .attr("aria-label", "Time axis; dragging along the band under it selects a window (the buttons above do it from the keyboard).");
    const svg = scroller.append("svg")
      .attr("class", "timeline-chart")
      .attr("width", width)
      .attr("height", height)
      .attr("role", "img");
    svg.append("defs").append("clipPath").attr("id", "timeline-clip")
      .append("rect").attr("x", left).attr("y", 0).attr("width", width - right - left).attr("height", height);

    // Lanes: a band each, the story line's title at the left.
    const laneGroup = svg.append("g").attr("class", "lanes");
    rows.forEach((row, index) => {
      const y = index * LANE;
      const lane = laneGroup.append("g").attr("class", `lane${index % 2 ? " odd" : ""}${row.id === FINDINGS_LANE ? " findings-lane" : ""}`)
        .attr("data-lane", row.id);
      lane.append("rect").attr("class", "lane-band").attr("x", 0).attr("y", y).attr("width", width).attr("height", LANE);
      const folding = row.episode ?? (row.runExpanded ? row.id : null);
      const label = lane.append("text").attr("class", `lane-label${folding ? " folds" : ""}`)
        .attr("x", 4 + row.depth * 8).attr("y", y + LANE / 2).attr("dy", "0.35em")
        .text(clip(`${folding ? "▾ " : row.depth ? "↳ " : ""}${row.title}`, Math.floor((left - 8 - row.depth * 8) / 6.4)));
      label.append("title").text(row.title);
      if (folding) label.on("click", () => this.handlers.toggle(folding));
    });

    // The zoom surface under the marks (Ctrl + wheel or pinch, drag), then the marks, clipped.
    svg.append("rect").attr("class", "zoom-surface")
      .attr("x", left).attr("y", 0).attr("width", width - right - left).attr("height", height);
    const plot = svg.append("g").attr("clip-path", "url(#timeline-clip)");
    const cursor = plot.append("line").attr("class", "replay-cursor").attr("y1", 0).attr("y2", height);
    const marks = plot.append("g").attr("class", "marks");
    const placed = [];
    const spans = [];
    const runs = [];
    laneList.forEach((lane, index) => {
      const y = laneY(index + 1);
      for (const event of lane.events) placed.push({ event, y, episode: this.view.grain === "episodes" && event.kind === "episode" });
      for (const span of lane.spans ?? []) if (span.end !== null) spans.push({ span, y });
      if (lane.run) runs.push({ run: lane.run, y });
    });
    const episodeCount = placed.filter((d) => d.episode).length;
    svg.attr("aria-label", episodeCount
      ? `Timeline: ${episodeCount} episodes, ${placed.length - episodeCount} other events and ${runs.length} folded sub-agent runs in ${laneList.length} lanes, and ${this.findings.length} findings; the list below holds the same.`
      : `Timeline: ${placed.length} events in ${laneList.length} lanes and ${this.findings.length} findings; the list below holds the same events.`);
    // An episode's span: from its request to its last work, behind its mark.
    const spanLines = marks.selectAll("line.episode-span").data(spans).join("line")
      .attr("class", (d) => `episode-span outcome-${d.span.episode.outcome}`)
      .attr("data-episode", (d) => d.span.episode.event_id)
      .attr("y1", (d) => d.y).attr("y2", (d) => d.y);
    // A sub-agent's run, folded: one bar from its first event to its last.
    const runMarks = marks.selectAll("rect.run-mark").data(runs).join("rect")
      .attr("class", "mark run-mark")
      .attr("data-line", (d) => d.run.id)
      .attr("data-events", (d) => d.run.events.map((e) => e.event_id).join(" "))
      .attr("y", (d) => d.y - 5).attr("height", 10).attr("rx", 5)
      .on("click", (_, d) => this.handlers.toggle(d.run.id));
    runMarks.append("title").text((d) => `${d.run.events.length} events of this run, ${stamp(d.run.from)} – ${stamp(d.run.to)}: click to open them`);
    const eventMarks = marks.selectAll("circle.mark").data(placed).join("circle")
      .attr("class", (d) => `mark event-mark${d.episode ? " episode-mark" : ""} kind-${kindIndex(kinds, d.event.kind)} outcome-${outcome.get(d.event.event_id)}`)
      .attr("data-event", (d) => d.event.event_id)
      .attr("r", (d) => (d.episode ? 7 : 5.5))
      .attr("cy", (d) => d.y)
      .on("click", (_, d) => (d.episode ? this.handlers.toggle(d.event.event_id) : this.handlers.open({ type: "event", id: d.event.event_id })));
    const expanded = this.view.expanded;
    eventMarks.append("title").text((d) =>
      `${d.event.title}\n${d.event.kind.replaceAll("_", " ")} · ${d.episode ? d.event.summary : outcomeLabel(outcome.get(d.event.event_id))} · ${stamp(d.event.occurred_at)}`
      + (d.episode ? (expanded.has(d.event.event_id) ? "\nClick to fold its events" : "\nClick to open its events") : ""));
    const findingMarks = marks.selectAll("path.finding-mark").data(this.findings.filter((f) => millis(f.at) !== null)).join("path")
      .attr("class", (f) => `mark finding-mark severity-${f.severity} status-${f.status}`)
      .attr("data-finding", (f) => f.finding_id)
      .attr("d", "M0,-7L7,0L0,7L-7,0Z")
      .on("click", (_, f) => this.handlers.openFinding(f));
    findingMarks.append("title").text((f) => `${f.severity} · ${f.title} (${f.rule}) · ${stamp(f.at)}`);

    const axis = top.append("g").attr("class", "axis").attr("transform", `translate(0,${AXIS - 2})`);
    const band = top.append("g").attr("class", "brush").attr("transform", `translate(0,${AXIS})`);
    const topCursor = top.append("line").attr("class", "replay-cursor axis-cursor").attr("y1", AXIS - 8).attr("y2", head);
    top.append("text").attr("class", "band-label").attr("x", 4).attr("y", AXIS + BAND / 2).attr("dy", "0.35em")
      .text(narrow ? "Window ↔" : "Drag here: a window ↔");

    let x = this.transform.rescaleX(x0);
    const place = () => {
      axis.call(d3.axisTop(x).ticks(Math.max(2, Math.floor((width - left) / 110))).tickSizeOuter(0));
      eventMarks.attr("cx", (d) => x(millis(d.event.occurred_at)));
      spanLines.attr("x1", (d) => x(millis(d.span.episode.occurred_at))).attr("x2", (d) => x(d.span.end));
      runMarks.attr("x", (d) => x(d.run.from)).attr("width", (d) => Math.max(x(d.run.to) - x(d.run.from), 10));
      findingMarks.attr("transform", (f) => `translate(${x(millis(f.at))},${laneY(0)})`);
      const at = this.cursor;
      const cx = at === null ? -10 : x(at);
      for (const line of [cursor, topCursor]) line.attr("x1", cx).attr("x2", cx).classed("hidden", at === null);
      const [from, to] = [x.invert(left).getTime(), x.invert(width - right).getTime()];
      this.host.dataset.visibleFrom = String(Math.round(from));
      this.host.dataset.visibleTo = String(Math.round(to));
      this.handlers.zoomed?.([from, to], this.transform.k === 1);
    };
    this.place = place;

    const brush = d3.brushX().extent([[left, 0], [width - right, BAND]]);
    let moving = false;
    brush.on("end", (event) => {
      if (moving) return;
      const selection = event.selection;
      this.window = selection ? [x.invert(selection[0]).getTime(), x.invert(selection[1]).getTime()] : null;
      this.handlers.brushed(this.window);
    });
    band.call(brush);
    const showWindow = () => {
      moving = true;
      const shown = this.window && [Math.max(left, x(this.window[0])), Math.min(width - right, x(this.window[1]))];
      band.call(brush.move, shown && shown[1] > shown[0] ? shown : null);
      moving = false;
    };
    this.brushTo = (window) => {
      this.window = window;
      showWindow();
      this.handlers.brushed(window);
    };

    // Zoom from the whole span down to a few minutes (x only); drag pans. A plain wheel
    // scrolls the lanes; with Ctrl (or a pinch) it zooms.
    const zoom = d3.zoom()
      .scaleExtent([1, Math.max(1, span / (5 * MINUTE))])
      .extent([[left, 0], [width - right, height]])
      .translateExtent([[left, 0], [width - right, height]])
      .filter((event) => (event.type === "wheel" ? event.ctrlKey || event.metaKey : !event.ctrlKey && !event.button))
      .on("zoom", (event) => {
        this.transform = event.transform;
        x = event.transform.rescaleX(x0);
        this.range = event.transform.k === 1 && event.transform.x === 0 ? null : [x.invert(left).getTime(), x.invert(width - right).getTime()];
        place();
        if (this.window) showWindow();
      });
    this.zoom = zoom;
    this.svg = svg;
    if (this.fitPending) {
      this.fitPending = false;
      this.range = this.opening([...placed.map((d) => millis(d.event.occurred_at)), ...runs.map((d) => d.run.from)], span);
    }
    this.transform = this.range ? this.transformFor(x0, this.range) : d3.zoomIdentity;
    svg.call(zoom).call(zoom.transform, this.transform).on("dblclick.zoom", null);
    this.x = () => x;
    place();
    if (this.window) showWindow();
    this.setMoment(this.cursor);
  }

  /**
   * The opening range: the narrowest stretch holding two thirds of the marks (padded,
   * at least an hour), when it is under a third of the whole span; else null (all).
   */
  opening(times, span) {
    const busiest = densestWindow(times);
    if (!busiest) return null;
    const pad = Math.max((busiest[1] - busiest[0]) * 0.08, 10 * MINUTE);
    let [from, to] = [busiest[0] - pad, busiest[1] + pad];
    if (to - from < HOUR) [from, to] = [(from + to) / 2 - HOUR / 2, (from + to) / 2 + HOUR / 2];
    return (to - from) * 3 > span ? null : [from, to];
  }

  transformFor(x0, [from, to]) {
    const [lo, hi] = x0.range();
    // (A range under a pixel of the whole axis is still a range: no rounding here.)
    const k = (hi - lo) / Math.max(x0(to) - x0(from), 1e-6);
    return this.d3.zoomIdentity.translate(lo, 0).scale(k).translate(-x0(from), 0);
  }

  /** Zoom so that a time range ([from, to] milliseconds) fills the axis. */
  zoomTo([from, to]) {
    if (!this.svg) return;
    this.svg.call(this.zoom.transform, this.transformFor(this.x0, [from, to]));
  }

  /** The visible time range, [from, to] milliseconds. */
  visible() {
    const x = this.x();
    const [lo, hi] = x.range();
    return [x.invert(lo).getTime(), x.invert(hi).getTime()];
  }

  /** Zoom by a factor around the middle (2: in, 0.5: out), or back to everything (null). */
  zoomBy(factor) {
    if (!this.svg) return;
    if (factor === null) this.svg.call(this.zoom.transform, this.d3.zoomIdentity);
    else this.svg.call(this.zoom.scaleBy, factor);
  }

  /** Select a window ([from, to] milliseconds; null clears it) as a brush would. */
  selectWindow(window) {
    this.brushTo?.(window);
  }

  /** The replay moment (milliseconds; null: now): a cursor, later events faded. */
  setMoment(moment) {
    this.cursor = moment;
    if (!this.svg) return;
    this.svg.selectAll(".event-mark").classed("future", (d) => moment !== null && millis(d.event.occurred_at) > moment);
    this.svg.selectAll(".run-mark").classed("future", (d) => moment !== null && d.run.from > moment);
    this.place?.();
  }
}
