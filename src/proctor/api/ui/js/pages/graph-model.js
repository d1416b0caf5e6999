// The story graph page's data work, no DOM: grouping events by day, which events an
// entity or relation touches, and the replay filter (what was known at a past moment).
//
// The API has no "as of" read over time (only "as published": a result's snapshot), so
// the replay filters one result's facts by their recorded times: an event by when it
// happened, anything else by the earliest source it cites (an entity also by its
// earliest event). A fact without any recorded time shows only at "now".

/** The key of a source in a graph's `sources` map. */
export function sourceKey(ref) {
  return `${ref.source_type},${ref.source_id}`;
}

/** Milliseconds since the epoch, or null for a missing or unreadable time. */
export function millis(iso) {
  if (!iso) return null;
  const value = Date.parse(iso);
  return Number.isNaN(value) ? null : value;
}

/** The day an event happened on, in the viewer's time zone ("2026-02-17"), or "undated". */
export function dayKey(iso) {
  const value = millis(iso);
  if (value === null) return "undated";
  const date = new Date(value);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** A day heading ("Tue, 17 Feb 2026"). */
export function dayLabel(key) {
  if (key === "undated") return "Without a recorded time";
  const [year, month, day] = key.split("-").map(Number);
  return new Date(year, month - 1, day).toLocaleDateString(undefined, {
    weekday: "short", day: "numeric", month: "short", year: "numeric",
  });
}

/** Events grouped by day, oldest day first (undated last); each day's events in time order. */
export function groupByDay(events) {
  /** @type {Map<string, any[]>} */
  const days = new Map();
  const sorted = [...events].sort((a, b) => (millis(a.occurred_at) ?? Infinity) - (millis(b.occurred_at) ?? Infinity));
  for (const event of sorted) {
    const key = dayKey(event.occurred_at);
    if (!days.has(key)) days.set(key, []);
    days.get(key).push(event);
  }
  return [...days.entries()].map(([key, dayEvents]) => ({ key, events: dayEvents }));
}

/** The ids of the events a selected entity or relation touches. */
export function touchedEvents(graph, selection) {
  const ids = new Set();
  if (!selection) return ids;
  if (selection.type === "entity") {
    for (const event of graph.events) if (event.entity_ids.includes(selection.id)) ids.add(event.event_id);
  } else if (selection.type === "relation") {
    const relation = graph.relations.find((r) => r.relation_id === selection.id);
    if (!relation) return ids;
    const cited = new Set(relation.sources.map(sourceKey));
    for (const event of graph.events) {
      const both = event.entity_ids.includes(relation.from_entity_id) && event.entity_ids.includes(relation.to_entity_id);
      if (both || event.sources.some((ref) => cited.has(sourceKey(ref)))) ids.add(event.event_id);
    }
  } else if (selection.type === "event") {
    ids.add(selection.id);
    // An episode stands for its work: selecting it marks that too.
    for (const member of episodes(graph).byEpisode.get(selection.id)?.members ?? []) ids.add(member.event_id);
  }
  return ids;
}

function earliest(values) {
  const known = values.filter((value) => value !== null);
  return known.length ? Math.min(...known) : null;
}

const known = new WeakMap();

/** When each fact became known (milliseconds or null), by type and id (worked out once
 * per graph: the replay slider asks on every step). */
export function knownTimes(graph) {
  if (!known.has(graph)) known.set(graph, workOutKnownTimes(graph));
  return known.get(graph);
}

function workOutKnownTimes(graph) {
  const cited = (refs) => earliest(refs.map((ref) => millis(graph.sources[sourceKey(ref)]?.occurred_at)));
  const events = new Map(graph.events.map((e) => [e.event_id, millis(e.occurred_at) ?? cited(e.sources)]));
  const fromEvents = new Map();
  for (const event of graph.events) {
    const at = events.get(event.event_id) ?? null;
    for (const id of event.entity_ids) {
      if (!fromEvents.has(id)) fromEvents.set(id, []);
      fromEvents.get(id).push(at);
    }
  }
  const entities = new Map(graph.entities.map((entity) =>
    [entity.entity_id, earliest([cited(entity.sources), ...(fromEvents.get(entity.entity_id) ?? [])])]));
  const relations = new Map(graph.relations.map((r) => [r.relation_id,
    cited(r.sources) ?? latestOf(entities.get(r.from_entity_id), entities.get(r.to_entity_id))]));
  const changes = new Map(graph.changes.map((c) => [c.change_id, cited(c.sources) ?? entities.get(c.entity_id) ?? null]));
  const openItems = new Map(graph.open_items.map((o) => [o.key, cited(o.sources)]));
  return { events, entities, relations, changes, openItems };
}

function latestOf(a, b) {
  return a == null || b == null ? null : Math.max(a, b);
}

const stepped = new WeakMap();

/** The distinct moments the replay slider steps through, oldest first. */
export function moments(graph) {
  if (!stepped.has(graph)) stepped.set(graph, workOutMoments(graph));
  return stepped.get(graph);
}

function workOutMoments(graph) {
  const times = knownTimes(graph);
  const all = new Set();
  for (const map of Object.values(times)) for (const value of map.values()) if (value !== null) all.add(value);
  return [...all].sort((a, b) => a - b);
}

/**
 * The graph as known at `moment` (milliseconds; null: now, everything). Keeps the
 * shape of the API's graph so every view renders it unchanged.
 */
export function asKnownAt(graph, moment) {
  if (moment === null) return graph;
  const times = knownTimes(graph);
  const known = (map, id) => {
    const value = map.get(id);
    return value !== null && value !== undefined && value <= moment;
  };
  const events = graph.events.filter((e) => known(times.events, e.event_id));
  const shownEvents = new Set(events.map((e) => e.event_id));
  return {
    ...graph,
    events,
    entities: graph.entities.filter((e) => known(times.entities, e.entity_id)),
    relations: graph.relations.filter((r) => known(times.relations, r.relation_id)),
    changes: graph.changes.filter((c) => known(times.changes, c.change_id)),
    open_items: graph.open_items.filter((o) => known(times.openItems, o.key)),
    story_lines: graph.story_lines
      .map((line) => ({ ...line, event_ids: line.event_ids.filter((id) => shownEvents.has(id)) }))
      .filter((line) => line.event_ids.length > 0),
  };
}

/**
 * The graph's episodes (a user's request and the work it caused, SPEC REV-13) and its
 * other sub-threads. The structural layer puts each episode event in its conversation's
 * story line and in a sub-thread of that line holding the episode and then its work; a
 * sub-thread holding no episode is another conversation's work hung under its parent's
 * line (a sub-agent run, told in single events).
 *
 * `byEpisode`: episode id → { episode, lineId, members (its work, in time order), end };
 * `ofMember`: a work event's id → its episode's id; `episodeLines`: sub-thread id →
 * episode id; `runs`: the other sub-threads' ids. Worked out once per graph.
 */
const grouped = new WeakMap();

export function episodes(graph) {
  if (!grouped.has(graph)) grouped.set(graph, workOutEpisodes(graph));
  return grouped.get(graph);
}

function workOutEpisodes(graph) {
  const byId = new Map(graph.events.map((e) => [e.event_id, e]));
  const byEpisode = new Map();
  const ofMember = new Map();
  const episodeLines = new Map();
  const runs = new Set();
  const known = new Set(graph.story_lines.map((line) => line.story_line_id));
  for (const line of graph.story_lines) {
    if (!line.parent_id || !known.has(line.parent_id)) continue;
    const heads = line.event_ids.filter((id) => byId.get(id)?.kind === "episode");
    if (heads.length !== 1) {
      if (heads.length === 0) runs.add(line.story_line_id);
      continue;
    }
    const episode = byId.get(heads[0]);
    const members = line.event_ids.filter((id) => id !== episode.event_id).map((id) => byId.get(id)).filter(Boolean);
    members.sort((a, b) => (millis(a.occurred_at) ?? Infinity) - (millis(b.occurred_at) ?? Infinity));
    const times = [episode, ...members].map((e) => millis(e.occurred_at)).filter((t) => t !== null);
    byEpisode.set(episode.event_id, {
      episode, lineId: line.story_line_id, members, end: times.length ? Math.max(...times) : null,
    });
    episodeLines.set(line.story_line_id, episode.event_id);
    for (const member of members) ofMember.set(member.event_id, episode.event_id);
  }
  for (const event of graph.events) {
    if (event.kind === "episode" && !byEpisode.has(event.event_id)) {
      // An episode without work (or whose sub-thread is not in this view) stands alone.
      byEpisode.set(event.event_id, { episode: event, lineId: null, members: [], end: millis(event.occurred_at) });
    }
  }
  return { byEpisode, ofMember, episodeLines, runs };
}

/**
 * What a grain shows of the graph's events: "events" every one; "episodes" the episodes
 * and the events no episode holds, except the work of the episodes in `expanded` (ids),
 * shown as well.
 */
export function eventsOfGrain(graph, grain, expanded = new Set()) {
  if (grain === "events") return graph.events;
  const { ofMember } = episodes(graph);
  return graph.events.filter((e) => !ofMember.has(e.event_id) || expanded.has(ofMember.get(e.event_id)));
}

/**
 * The timeline's lanes: one per story line, oldest line first (a sub-thread right after
 * its parent), each with its events in time order; events in no shown line get one last
 * lane. Only events with a recorded time are placed; `untimed` counts the others.
 *
 * At the "episodes" grain (`view.grain`, the default) a conversation's lane holds its
 * episodes, each drawn from its request to its last work (`span`), and only the events
 * no episode holds; an episode's own sub-thread is a lane only while the episode is
 * expanded (`view.expanded`: episode ids), and another sub-thread (a sub-agent's work)
 * is folded into one `run` from its first event to its last until it is expanded too
 * (`view.expanded`: its line id). At the "events" grain every line is a lane of its
 * single events.
 */
export function lanes(graph, view = { grain: "events", expanded: new Set() }) {
  const byId = new Map(graph.events.map((e) => [e.event_id, e]));
  const placed = new Set();
  const lines = [...graph.story_lines];
  const known = new Set(lines.map((line) => line.story_line_id));
  const children = new Map();
  for (const line of lines) {
    if (!line.parent_id || !known.has(line.parent_id)) continue;
    if (!children.has(line.parent_id)) children.set(line.parent_id, []);
    children.get(line.parent_id).push(line);
  }
  const grouped = view.grain === "episodes" ? episodes(graph) : null;
  const expanded = view.expanded ?? new Set();
  const ordered = [];
  const visit = (line, depth) => {
    ordered.push({ line, depth });
    for (const child of children.get(line.story_line_id) ?? []) visit(child, depth + 1);
  };
  for (const line of lines) if (!line.parent_id || !known.has(line.parent_id)) visit(line, 0);
  const timed = (ids) => ids.map((id) => byId.get(id)).filter((e) => e && millis(e.occurred_at) !== null);
  const result = [];
  for (const { line, depth } of ordered) {
    for (const id of line.event_ids) placed.add(id);
    const title = line.title || "Untitled story line";
    const lane = { id: line.story_line_id, title, depth, events: [], spans: [], run: null, episode: null };
    if (!grouped) {
      lane.events = timed(line.event_ids);
    } else if (grouped.episodeLines.has(line.story_line_id)) {
      const episodeId = grouped.episodeLines.get(line.story_line_id);
      if (!expanded.has(episodeId)) continue;
      lane.episode = episodeId;
      lane.events = timed(line.event_ids).filter((e) => e.event_id !== episodeId);
    } else if (grouped.runs.has(line.story_line_id) && !expanded.has(line.story_line_id)) {
      const events = timed(line.event_ids);
      const times = events.map((e) => millis(e.occurred_at));
      if (events.length) lane.run = { id: line.story_line_id, from: Math.min(...times), to: Math.max(...times), events };
    } else {
      lane.events = timed(line.event_ids).filter((e) => !grouped.ofMember.has(e.event_id));
      lane.spans = lane.events.filter((e) => e.kind === "episode").map((e) => grouped.byEpisode.get(e.event_id));
      if (grouped.runs.has(line.story_line_id)) lane.runExpanded = true;
    }
    result.push(lane);
  }
  const rest = graph.events.filter((e) => !placed.has(e.event_id) && millis(e.occurred_at) !== null
    && !(grouped && grouped.ofMember.has(e.event_id)));
  if (rest.length) result.push({ id: "", title: "In no story line", depth: 0, events: rest, spans: [], run: null, episode: null });
  return result;
}

/**
 * The narrowest stretch of time holding at least `share` of the given times
 * (milliseconds), as [from, to]; null when there are fewer than two times. A timeline
 * opens on it so that the busiest period is readable, not squeezed into a column of a
 * months-wide axis.
 */
export function densestWindow(times, share = 2 / 3) {
  const sorted = times.filter((t) => t !== null && Number.isFinite(t)).sort((a, b) => a - b);
  if (sorted.length < 2) return null;
  const need = Math.max(2, Math.ceil(sorted.length * share));
  let best = null;
  for (let i = 0; i + need - 1 < sorted.length; i++) {
    const width = sorted[i + need - 1] - sorted[i];
    if (best === null || width < best[1] - best[0]) best = [sorted[i], sorted[i + need - 1]];
  }
  return best;
}

/** The events without a recorded time (the timeline cannot place them; the list shows them). */
export function untimed(graph) {
  return graph.events.filter((e) => millis(e.occurred_at) === null);
}

/**
 * What became of each failed event: "fixed" when a later event of the same kind in one of
 * its story lines (or, in none, touching one of its entities) went well, else "open".
 * Other events map to their own outcome ("ok", "unknown" …).
 */
const settled = new WeakMap();

export function outcomes(graph) {
  if (!settled.has(graph)) settled.set(graph, workOutOutcomes(graph));
  return settled.get(graph);
}

function workOutOutcomes(graph) {
  const result = new Map();
  const sorted = [...graph.events].sort((a, b) => (millis(a.occurred_at) ?? Infinity) - (millis(b.occurred_at) ?? Infinity));
  sorted.forEach((event, index) => {
    if (event.outcome !== "failed") {
      result.set(event.event_id, event.outcome);
      return;
    }
    const related = (later) => later.kind === event.kind && (
      later.story_line_ids.some((id) => event.story_line_ids.includes(id))
      || later.entity_ids.some((id) => event.entity_ids.includes(id)));
    const fixed = sorted.slice(index + 1).some((later) => later.outcome === "ok" && related(later));
    result.set(event.event_id, fixed ? "fixed" : "open");
  });
  return result;
}

/** Words for an outcome `outcomes` gave. */
export function outcomeLabel(outcome) {
  return { fixed: "failed, fixed later", open: "failed, still open", ok: "ok" }[outcome] ?? outcome;
}

/** The graph with only the events inside a window ([from, to] milliseconds; null: all). */
export function inWindow(graph, window) {
  if (!window) return graph;
  const [from, to] = window;
  const events = graph.events.filter((e) => {
    const at = millis(e.occurred_at);
    return at !== null && at >= from && at <= to;
  });
  return { ...graph, events };
}

/**
 * Entities grouped by kind for the side panel: the kinds with most entities first, in
 * each the entities involved in most events first (then by name), with their counts.
 */
export function entityGroups(graph) {
  const counts = new Map();
  for (const event of graph.events) for (const id of event.entity_ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  const groups = new Map();
  for (const entity of graph.entities) {
    if (!groups.has(entity.kind)) groups.set(entity.kind, []);
    groups.get(entity.kind).push({ entity, events: counts.get(entity.entity_id) ?? 0 });
  }
  return [...groups.entries()]
    .map(([kind, items]) => ({
      kind,
      items: items.sort((a, b) => b.events - a.events || a.entity.name.localeCompare(b.entity.name)),
    }))
    .sort((a, b) => b.items.length - a.items.length || a.kind.localeCompare(b.kind));
}
