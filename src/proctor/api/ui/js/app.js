// The single-page shell: a hash router over pages, the main navigation, and the token
// form when the server asks for one. Each page module exports `routes`.

import { ApiError, Superseded, setToken } from "./api.js";
import { errorBox, h, replace } from "./dom.js";
import * as conversations from "./pages/conversations.js";
// The header's search box is on every page: wired before the first page shows, so a key
// typed (or Enter pressed) in it never reaches a form not yet taken over.
import * as search from "./pages/search.js";

/**
 * @typedef {{ main: HTMLElement, params: string[], query: URLSearchParams, signal: AbortSignal }} PageContext
 * @typedef {{ pattern: RegExp, section: string, title: string,
 *             render: (context: PageContext) => Promise<void> | void }} Route
 */

/** @type {Route[]} */
const routes = [...conversations.routes, ...search.routes];

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
    // The page may be in a module still loading (the first page is shown without waiting
    // for the others): wait for them before saying there is no such page.
    const signal = current.signal;
    await modulesLoaded;
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

/** @type {(value?: unknown) => void} */
let modulesDone = () => {};
/** Settles once every optional page module has loaded (or failed to). */
const modulesLoaded = new Promise((resolve) => { modulesDone = resolve; });

/** Whether the shell can show `path` now (its route is known, or it is the start page). */
function known(path) {
  return path === "/" || routes.some((candidate) => candidate.pattern.test(path));
}

/**
 * Load the optional page modules and show the page the address names as soon as its
 * route is known: a conversation (a route of the shell's own) does not wait for the other
 * pages' modules, and a page of a module waits for that module only.
 */
async function start() {
  // The header's notifications badge and panel: on every page. Its first request waits
  // until the first page is drawn (or 2 s, whichever comes first), so it does not compete
  // with that page's own requests for the server.
  const notifications = import("./notifications.js");
  let pageShown = () => {};
  Promise.race([new Promise((resolve) => { pageShown = resolve; }), new Promise((resolve) => setTimeout(resolve, 2000))])
    .then(() => notifications)
    .then((module) => module.start())
    .catch((error) => console.error("notifications failed to load", error));
  const modules = ["reviews", "graph", "activity", "plans", "settings", "inbox", "suggestions"];
  /** @type {Promise<void> | null} */
  let first = null;
  const showWhenKnown = () => {
    if (!first && known(parse().path)) first = render();
  };
  showWhenKnown();
  await Promise.all(modules.map(async (name) => {
    try {
      const module = await import(`./pages/${name}.js`);
      addRoutes(module.routes);
      showWhenKnown();
    } catch (error) {
      console.error(`page module ${name} failed to load`, error);
    }
  }));
  modulesDone();
  await (first ?? render()).finally(() => pageShown());
}

start();
