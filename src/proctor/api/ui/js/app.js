// The single-page shell: a hash router over pages, the main navigation, and the token
// form when the server asks for one. Each page module exports `routes`. The shell itself
// is small (this module, api.js, dom.js and the header's search): the page the address
// names loads first, alone, and the other pages' modules follow once it is shown.

import { ApiError, Superseded, setToken } from "./api.js";
import { errorBox, h, replace } from "./dom.js";
// The header's search box is on every page: wired before the first page shows, so a key
// typed (or Enter pressed) in it never reaches a form not yet taken over.
import * as search from "./pages/search.js";

/**
 * @typedef {{ main: HTMLElement, params: string[], query: URLSearchParams, signal: AbortSignal }} PageContext
 * @typedef {{ pattern: RegExp, section: string, title: string,
 *             render: (context: PageContext) => Promise<void> | void }} Route
 */

/** @type {Route[]} */
const routes = [...search.routes];

/** Pages add theirs (modules loaded after the shell register themselves). */
export function addRoutes(more) {
  routes.push(...more);
}

let current = new AbortController();
/** @type {null | (() => boolean)} */
let unsaved = null;
let lastHash = location.hash;
/** Whether a page has been rendered yet (the first render always draws one). */
let shown = false;

/**
 * A page with a form registers `isDirty`: while it returns true, leaving the page asks
 * for confirmation first. Cleared on every navigation.
 * @param {() => boolean} isDirty
 */
export function guardLeaving(isDirty) {
  unsaved = isDirty;
}

function mayLeave() {
  return !unsaved || !unsaved() || window.confirm("You have unsaved changes. Leave without saving?");
}

function parse() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, search] = hash.split("?");
  return { path: path || "/", query: new URLSearchParams(search ?? "") };
}

/** Go to a page (a hash path like "/conversations/abc"). */
export function go(path) {
  location.hash = `#${path}`;
}

/**
 * The element an in-page fragment names ("#main", the skip link's target), or null for a
 * route ("#/conversations") or a fragment that names nothing. Such a fragment is not a page:
 * following it moves focus there and leaves the route (and the history) as they were.
 * @param {string} hash
 */
function fragmentTarget(hash) {
  if (!hash.startsWith("#") || hash.startsWith("#/") || hash.length < 2) return null;
  return document.getElementById(decodeURIComponent(hash.slice(1)));
}

/** Move focus to an in-page target (made focusable for the moment if it is not). */
function focusTarget(target) {
  if (!target.hasAttribute("tabindex") && target.tabIndex < 0) target.setAttribute("tabindex", "-1");
  target.focus();
  target.scrollIntoView({ block: "start" });
}

document.addEventListener("click", (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = /** @type {Element | null} */ (event.target instanceof Element ? event.target.closest("a[href^='#']") : null);
  const target = link && fragmentTarget(link.getAttribute("href") ?? "");
  if (!target) return;
  event.preventDefault();
  focusTarget(target);
});

async function render() {
  const fragment = fragmentTarget(location.hash);
  if (fragment) {
    // Reached without the click handler (typed, or a bookmark): the page shown stays, or,
    // when none is shown yet, the start page loads; either way the fragment gets focus.
    const back = lastHash && !fragmentTarget(lastHash) ? lastHash : "#/";
    history.replaceState(null, "", back);
    lastHash = back;
    focusTarget(fragment);
    if (shown) return;
  }
  shown = true;
  if (location.hash !== lastHash && !mayLeave()) {
    history.replaceState(null, "", lastHash || "#/");
    return;
  }
  unsaved = null;
  lastHash = location.hash;
  current.abort();
  current = new AbortController();
  const { path, query } = parse();
  if (path === "/") {
    go("/conversations");
    return;
  }
  const main = /** @type {HTMLElement} */ (document.getElementById("main"));
  let route = routes.find((candidate) => candidate.pattern.test(path));
  if (!route) {
    // The page may be in a module not loaded yet (the first page is shown without waiting
    // for the others): load its module (or, for an address no module claims, all of them)
    // before saying there is no such page. The page left is cleared meanwhile: its keys and
    // buttons must not act while the next one loads.
    replace(main, h("div", { class: "page-view" }, h("p", { class: "muted" }, "Loading…")));
    const signal = current.signal;
    await modulesFor(path);
    if (signal.aborted) return;
    route = routes.find((candidate) => candidate.pattern.test(path));
  }
  for (const link of document.querySelectorAll("#nav a")) {
    const section = /** @type {HTMLElement} */ (link).dataset.section;
    if (route && section === route.section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (!route) {
    replace(main, h("h1", null, "Not found"), h("p", null, "No page here. ", h("a", { href: "#/conversations" }, "Conversations")));
    return;
  }
  document.title = `${route.title} · Proctor`;
  const match = path.match(route.pattern) ?? [];
  // Each visit draws into a view of its own: a page still loading when the address moves on
  // (a search typed on the conversations list) finishes into a view no longer shown, never
  // over the page that replaced it.
  const view = h("div", { class: "page-view" }, h("p", { class: "muted" }, "Loading…"));
  replace(main, view);
  const signal = current.signal;
  try {
    await route.render({ main: view, params: match.slice(1).map(decodeURIComponent), query, signal });
  } catch (error) {
    if (error instanceof Superseded || signal.aborted) return;
    if (error instanceof ApiError && error.status === 401) {
      replace(view, tokenForm());
      return;
    }
    replace(view, h("h1", null, route.title), errorBox(error));
  }
}

function tokenForm() {
  const input = h("input", { id: "token", type: "password", autocomplete: "current-password", required: true });
  const form = h("form", { class: "card narrow", on: { submit: (event) => {
    event.preventDefault();
    setToken(/** @type {HTMLInputElement} */ (input).value.trim());
    render();
  } } },
    h("h1", null, "This server needs its token"),
    h("p", null, "Proctor was started with a token (PROCTOR_API_TOKEN). Enter it to continue; it is kept for this tab only."),
    h("label", { for: "token" }, "Token"),
    input,
    h("button", { type: "submit", class: "primary" }, "Continue"),
  );
  queueMicrotask(() => input.focus());
  return form;
}

window.addEventListener("hashchange", () => {
  if (fragmentTarget(location.hash)) {
    render();
    return;
  }
  render().then(() => {
    // The new page takes focus, unless focus was already moved into it while it loaded
    // (a keyboard user on a finding's button while the transcript still loads stays there).
    const main = document.getElementById("main");
    if (main && !main.contains(document.activeElement)) main.focus({ preventScroll: true });
  });
});
window.addEventListener("beforeunload", (event) => {
  if (unsaved && unsaved()) event.preventDefault();
});

/**
 * The page modules (under pages/): each with the first path segments of its routes and the
 * modules it imports beyond the shell's (tests/ui/test_shell_preload.py checks the lists
 * against the files). The shell loads the module the address names first, asking for
 * its imports at the same moment (one round trip, not one per level of imports; a
 * conversation's markdown.js starts fetching markdown-it at once); an address no module
 * claims waits for all of them.
 * @type {[string, string[], string[]][]}
 */
export const PAGE_MODULES = [
  ["conversations", ["conversations"], [
    "json-view.js", "markdown.js", "pages/conversation.js", "pages/findings-panel.js", "pages/goal-panel.js",
    "pages/memory-button.js", "pages/subagent-card.js", "pages/supervision-panel.js", "pages/trace-format.js",
    "pages/trace-tree.js"]],
  ["reviews", ["reviews"], []],
  ["graph", ["graph"], [
    "pages/graph-chart.js", "pages/graph-continue.js", "pages/graph-detail.js", "pages/graph-entities.js",
    "pages/graph-model.js", "pages/graph-timeline.js"]],
  ["activity", ["activity"], []],
  ["plans", ["plans"], []],
  ["settings", ["settings"], []],
  ["inbox", ["findings"], []],
  ["suggestions", ["suggestions", "tasks"], []],
];

/** @type {Map<string, Promise<void>>} */
const loading = new Map();

/** Load one page module (once) and add its routes; a failure is logged, not thrown. */
function loadModule(name) {
  let done = loading.get(name);
  if (!done) {
    const [, , imports] = PAGE_MODULES.find(([candidate]) => candidate === name) ?? [name, [], []];
    for (const module of imports) import(`./${module}`).catch(() => {});
    done = import(`./pages/${name}.js`)
      .then((module) => addRoutes(module.routes))
      .catch((error) => console.error(`page module ${name} failed to load`, error));
    loading.set(name, done);
  }
  return done;
}

/** Every page module, loaded (or failed). */
function loadAll() {
  return Promise.all(PAGE_MODULES.map(([name]) => loadModule(name))).then(() => {});
}

/** The module the address's first segment names, or null when none claims it. */
function moduleOf(path) {
  const segment = path.split("/")[1] ?? "";
  return PAGE_MODULES.find(([, segments]) => segments.includes(segment))?.[0] ?? null;
}

/** Load what `path` needs: its own module, or every module when none claims it. */
function modulesFor(path) {
  const name = moduleOf(path);
  return name ? loadModule(name) : loadAll();
}

/**
 * Settles once the page shown says it is ready: a page root that marks itself
 * (`data-page`) and finishes after its render returned (the story graph draws its chart
 * once d3 is in) sets `data-ready="true"`; a page without one is ready when drawn.
 * @returns {Promise<void>}
 */
function pageReady() {
  const pending = () => document.querySelector("#main [data-page]:not([data-ready='true'])");
  if (!pending()) return Promise.resolve();
  return new Promise((resolve) => {
    const watch = new MutationObserver(() => {
      if (pending()) return;
      watch.disconnect();
      resolve();
    });
    watch.observe(/** @type {HTMLElement} */ (document.getElementById("main")),
      { subtree: true, childList: true, attributes: true, attributeFilter: ["data-ready"] });
  });
}

/**
 * Show the page the address names as soon as its module is in, then load the other pages'
 * modules (a later page then shows at once). They wait until the first page is drawn and
 * ready (or 2 s, whichever comes first), so they do not compete with its requests and its
 * drawing.
 */
async function start() {
  // The header's notifications badge and panel: on every page; loaded after the first
  // page for the same reason.
  let pageShown = () => {};
  const firstShown = Promise.race([
    new Promise((resolve) => { pageShown = resolve; }).then(pageReady),
    new Promise((resolve) => setTimeout(resolve, 2000)),
  ]);
  firstShown
    .then(() => import("./notifications.js"))
    .then((module) => module.start())
    .catch((error) => console.error("notifications failed to load", error));
  firstShown.then(loadAll);
  const { path } = parse();
  if (path !== "/") await modulesFor(path);
  await render().finally(() => pageShown());
}

start();
