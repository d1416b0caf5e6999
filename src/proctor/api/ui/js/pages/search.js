// Search (SPEC REV-14, UI-3): the header's box over messages, events, entities and story
// lines, ranked as `proctor search` ranks them (GET /api/search: hybrid, or full text while
// the embedding model is missing). Typing asks per keystroke, debounced; an answer to a
// superseded question is dropped. Hits are grouped by kind, the query's words marked with
// <mark> in text nodes (observed content is untrusted: never parsed as HTML), and each
// links to its place: a message or tool call to its turn in the conversation, a graph
// object to the story graph with that object selected. `/` focuses the box, except while
// typing in a field or on a page with a search of its own (the findings inbox).

import { Superseded, latest, query } from "../api.js";
import { errorBox, h, replace } from "../dom.js";

const DEBOUNCE_MS = 150;
const BOX_HITS = 12;
const PAGE_HITS = 50;
const MIN_CHARS = 2;
/** Groups in the order they are shown: [key, heading, hit types]. */
const GROUPS = [
  ["messages", "Messages", ["message", "tool_call", "task_event"]],
  ["events", "Events", ["event"]],
  ["entities", "Entities", ["entity"]],
  ["story_lines", "Story lines", ["story_line"]],
];

export const routes = [
  { pattern: /^\/search$/, section: "search", title: "Search", render: searchPage },
];

/** A hit's kind and id (the API names them `doc_type` and `doc_id`). */
function kindOf(hit) {
  return String(hit.doc_type ?? hit.type ?? "");
}

function idOf(hit) {
  return String(hit.doc_id ?? hit.id ?? "");
}

/** Where a hit lives in the UI (a hash address), or null when it has no place. */
export function placeOf(hit) {
  const ref = hit.source_refs?.[0];
  if (["message", "tool_call", "task_event"].includes(kindOf(hit))) {
    const conversation = hit.conversation_id ?? ref?.conversation_id;
    if (!conversation) return null;
    return `#/conversations/${encodeURIComponent(conversation)}${query({ source: ref?.source_id ?? idOf(hit) })}`;
  }
  return `#/graph${query({ select: `${kindOf(hit)}:${idOf(hit)}` })}`;
}

/** The query's words, for marking: a long word by its first five letters (as the server
 * matches word forms, roughly), a short one as a whole word. */
function terms(text) {
  return [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter((word) => word.length >= MIN_CHARS))]
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .map((word) => (word.length > 4 ? `${word.slice(0, 5)}[\\p{L}\\p{N}_]*` : word));
}

/** `text` as text nodes with the words of `words` wrapped in <mark> (never as HTML). */
export function marked(text, words) {
  if (!words.length || !text) return [text];
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${words.join("|")})(?![\\p{L}\\p{N}_])`, "giu");
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const at = match.index ?? 0;
    if (at > last) parts.push(text.slice(last, at));
    parts.push(h("mark", null, match[0]));
    last = at + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

function kindLabel(hit) {
  return kindOf(hit).replace(/_/g, " ");
}

function hitItem(hit, words) {
  const place = placeOf(hit);
  const title = hit.title || hit.author || kindLabel(hit);
  const meta = [kindLabel(hit), hit.project, hit.occurred_at ? new Date(hit.occurred_at).toLocaleString() : null].filter(Boolean).join(" · ");
  const head = place
    ? h("a", { href: place, class: "search-hit-title", dataset: { hitType: kindOf(hit), hitId: idOf(hit) } }, marked(title, words))
    : h("span", { class: "search-hit-title" }, marked(title, words));
  return h("li", { class: "search-hit" },
    head,
    h("span", { class: "search-hit-meta muted" }, meta),
    hit.excerpt && h("p", { class: "search-hit-excerpt" }, marked(hit.excerpt, words)));
}

/** The answer's hits grouped by kind, each group with its heading. */
function grouped(data, words, idPrefix) {
  const used = new Set();
  const sections = [];
  for (const [key, heading, types] of GROUPS) {
    const hits = data.hits.filter((hit) => types.includes(kindOf(hit)));
    hits.forEach((hit) => used.add(hit));
    if (hits.length) sections.push([key, heading, hits]);
  }
  const rest = data.hits.filter((hit) => !used.has(hit));
  if (rest.length) sections.push(["other", "Other", rest]);
  return sections.map(([key, heading, hits]) => h("section", { class: "search-group", dataset: { group: key }, "aria-labelledby": `${idPrefix}-${key}` },
    h("h3", { id: `${idPrefix}-${key}` }, `${heading} (${hits.length})`),
    h("ul", { class: "plain search-hits" }, hits.map((hit) => hitItem(hit, words)))));
}

/** What the index says about the hits' completeness, when it says anything. */
function indexNote(data) {
  const notes = [];
  if (data.index && (data.index.stale || data.index.indexing)) {
    notes.push(h("p", { class: "search-index-note", role: "note" },
      data.index.indexing ? "Indexing is still catching up: recent messages may be missing. " : "The index is still catching up: some results may be missing or ranked by full text only. ",
      data.index.note ? h("span", { class: "muted" }, data.index.note) : ""));
  }
  if (data.note) notes.push(h("p", { class: "muted search-mode-note" }, data.note));
  return notes;
}

function renderAnswer(container, data, text, idPrefix) {
  const words = terms(text);
  replace(container,
    indexNote(data),
    data.hits.length
      ? grouped(data, words, idPrefix)
      : h("p", { class: "muted search-empty" }, `Nothing found for “${text}”.`));
}

// --- the header's box ---------------------------------------------------------------

/** Whether a key press is someone typing (in a field or an editable element). */
function typing(target) {
  return target instanceof Element && !!target.closest("input, select, textarea, [contenteditable=''], [contenteditable='true']");
}

function wireHeader() {
  const form = document.getElementById("global-search");
  const input = /** @type {HTMLInputElement | null} */ (document.getElementById("search-box"));
  const panel = document.getElementById("search-panel");
  if (!form || !input || !panel) return;
  const status = h("p", { class: "muted search-status", "aria-live": "polite" });
  const results = h("div", { class: "search-results" });
  const footer = h("p", { class: "search-more" });
  replace(panel, status, results, footer);
  let timer = 0;
  let asked = "";

  const close = () => { panel.hidden = true; };
  const open = () => { panel.hidden = false; };

  async function ask() {
    const text = input.value.trim();
    asked = text;
    if (text.length < MIN_CHARS) {
      // An answer still on its way is for an older question: `asked` no longer matches it.
      close();
      return;
    }
    open();
    status.textContent = "Searching…";
    try {
      const data = await latest("search-box", `/search${query({ q: text, limit: BOX_HITS })}`);
      if (text !== asked) return;
      status.textContent = `${data.hits.length ? data.hits.length : "No"} result${data.hits.length === 1 ? "" : "s"} for “${text}”`;
      renderAnswer(results, data, text, "search-box");
      replace(footer, data.hits.length >= BOX_HITS ? h("a", { href: `#/search${query({ q: text })}` }, "All results") : "");
    } catch (error) {
      if (error instanceof Superseded) return;
      status.textContent = "";
      replace(results, errorBox(error));
    }
  }

  input.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(ask, DEBOUNCE_MS);
  });
  input.addEventListener("focus", () => { if (input.value.trim().length >= MIN_CHARS && results.childNodes.length) open(); });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      if (!panel.hidden) { event.preventDefault(); close(); } else input.blur();
    } else if (event.key === "ArrowDown" && !panel.hidden) {
      const first = /** @type {HTMLElement | null} */ (panel.querySelector("a"));
      if (first) { event.preventDefault(); first.focus(); }
    }
  });
  panel.addEventListener("keydown", (event) => {
    const links = /** @type {HTMLElement[]} */ ([...panel.querySelectorAll("a")]);
    const at = links.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    if (event.key === "Escape") { event.preventDefault(); close(); input.focus(); }
    else if (event.key === "ArrowDown" && at >= 0) { event.preventDefault(); links[Math.min(at + 1, links.length - 1)].focus(); }
    else if (event.key === "ArrowUp" && at >= 0) { event.preventDefault(); (at === 0 ? input : links[at - 1]).focus(); }
  });
  panel.addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest("a")) close();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text.length < MIN_CHARS) return;
    close();
    location.hash = `#/search${query({ q: text })}`;
  });
  document.addEventListener("click", (event) => {
    if (event.target instanceof Node && !form.contains(event.target)) close();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "/" || event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) return;
    // A page with a search of its own keeps `/` for it (the findings inbox's filter).
    if (document.getElementById("inbox-q")) return;
    event.preventDefault();
    input.focus();
    input.select();
  });
}

wireHeader();

// --- the results page ---------------------------------------------------------------

async function searchPage({ main, query: params, signal }) {
  const text = (params.get("q") ?? "").trim();
  const box = /** @type {HTMLInputElement | null} */ (document.getElementById("search-box"));
  if (box && text && box.value.trim() !== text) box.value = text;
  const results = h("div", { class: "search-page-results", id: "search-page-results" });
  replace(main, h("div", { class: "search-page" },
    h("h1", null, text ? `Search: ${text}` : "Search"),
    text ? results : h("p", { class: "muted" }, "Type in the search box above (press / to get there): messages, events, entities and story lines are searched.")));
  if (!text) return;
  replace(results, h("p", { class: "muted" }, "Searching…"));
  const data = await latest("search-page", `/search${query({ q: text, limit: PAGE_HITS })}`);
  if (signal.aborted) return;
  renderAnswer(results, data, text, "search-page");
}
