// Building the page. Observed content (transcripts, tool output, finding text) is data:
// it only ever becomes text nodes or attribute values, never markup. Nothing here uses
// innerHTML, and a test checks that no file of the UI does.

import { ApiError, Superseded } from "./api.js";

/**
 * Create an element.
 * @param {string} tag
 * @param {Record<string, unknown> | null} [props] attributes; `on` maps events to handlers,
 *   `dataset` sets data-* attributes; boolean true sets an empty attribute, false/null skip it
 * @param {...unknown} children strings (as text), nodes, arrays of them; null/false skipped
 * @returns {HTMLElement}
 */
export function h(tag, props, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "on") {
      for (const [event, handler] of Object.entries(/** @type {object} */ (value))) {
        element.addEventListener(event, handler);
      }
    } else if (name === "dataset") {
      Object.assign(element.dataset, value);
    } else if (name.startsWith("on")) {
      throw new Error(`use the "on" property for ${name}`);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

/**
 * Append children (strings become text nodes).
 * @param {Node} parent
 * @param {unknown[]} children
 */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * Replace everything inside `parent`.
 * @param {Node} parent
 * @param {...unknown} children
 */
export function replace(parent, ...children) {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

// One formatter for every call: toLocaleString with options builds a new one each time
// (about 1 ms apiece; a list of 500 times spent half a second on it).
let shortTime = null;

/** A short, readable time ("29 Nov 14:05") from an ISO date, in the viewer's time zone. */
export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  shortTime ??= new Intl.DateTimeFormat(undefined, {
    day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
  });
  return shortTime.format(date);
}

/** A `<time>` element for an ISO date. */
export function timeEl(iso) {
  return h("time", { datetime: iso ?? null, title: iso ?? null }, when(iso));
}

/** Say something briefly to everyone, screen readers included. */
export function toast(message) {
  const box = document.getElementById("toast");
  if (!box) return;
  replace(box, message);
  box.classList.add("shown");
  clearTimeout(/** @type {any} */ (box).hideTimer);
  /** @type {any} */ (box).hideTimer = setTimeout(() => box.classList.remove("shown"), 4000);
}

/** A page-level error: the API's sentence, shown in an alert region. */
export function errorBox(error) {
  return h("div", { class: "error", role: "alert" }, error instanceof Error ? error.message : String(error));
}

/** Pager links for a list page (`total` may be unknown: then "Next" shows while full). */
export function pager(offset, limit, count, total, go) {
  const hasPrev = offset > 0;
  const hasNext = total === null || total === undefined ? count === limit : offset + count < total;
  if (!hasPrev && !hasNext) return null;
  return h("nav", { class: "pager", "aria-label": "Pages" },
    h("button", { type: "button", disabled: !hasPrev, on: { click: () => go(Math.max(0, offset - limit)) } }, "Previous"),
    h("span", { class: "muted" }, `${offset + 1}–${offset + count}` + (total != null ? ` of ${total}` : "")),
    h("button", { type: "button", disabled: !hasNext, on: { click: () => go(offset + limit) } }, "Next"),
  );
}

/**
 * One panel of a page that loads on its own: a loading placeholder first, then what `load`
 * draws into `container`, or, if it fails, the error and a Retry button that runs `load`
 * again for this panel alone. The rest of the page stays as it is: a failed findings
 * request never wipes the transcript beside it.
 *
 * The returned promise settles once the first attempt has drawn its content or its error;
 * it rejects only for a missing token (401), which the router answers with its token form.
 * An answer superseded by a newer request for the same slot is left to that request.
 * @param {HTMLElement} container
 * @param {(container: HTMLElement) => Promise<void> | void} load draws the panel's content
 * @param {{ label: string }} options what the panel shows ("Findings"), for the
 *   placeholder, the error and the heading shown with it
 * @returns {Promise<void>}
 */
export function panel(container, load, { label }) {
  const attempt = async (retried) => {
    container.setAttribute("aria-busy", "true");
    replace(container, h("p", { class: "muted panel-loading" }, `Loading ${label.toLowerCase()}…`));
    try {
      await load(container);
      container.removeAttribute("aria-busy");
      if (retried && !container.contains(document.activeElement)) {
        // The Retry button that had focus is gone: keep the keyboard user in this panel.
        if (!container.hasAttribute("tabindex")) container.setAttribute("tabindex", "-1");
        container.focus({ preventScroll: true });
      }
    } catch (error) {
      if (error instanceof Superseded) return;
      container.removeAttribute("aria-busy");
      if (error instanceof ApiError && error.status === 401) throw error;
      const message = error instanceof Error ? error.message : String(error);
      const retry = h("button", { type: "button", on: { click: () => { attempt(true).catch(() => {}); } } }, "Retry");
      replace(container,
        h("h2", null, label),
        h("div", { class: "error panel-error", role: "alert" },
          h("p", null, `${label} could not be loaded: ${message}`),
          retry));
      if (retried) retry.focus();
    }
  };
  return attempt(false);
}

/**
 * Make a block that may scroll (a `<pre>` with a maximum height or width) reachable from
 * the keyboard, as WCAG asks of scrollable regions: while its content overflows it is a
 * labelled tab stop (arrow keys and Page Up/Down then scroll it); when everything fits it
 * is not one, so short outputs add nothing to the tab order. Watched as it resizes (a
 * folded block unfolded, a `<details>` opened, a narrower window).
 * @template {HTMLElement} T
 * @param {T} element
 * @param {string} label what the block holds ("Tool output"), read when it takes focus
 * @returns {T}
 */
export function scrollable(element, label) {
  element.dataset.scrollLabel = label;
  overflowWatcher().observe(element);
  return element;
}

/** @type {ResizeObserver | null} */
let watcher = null;

function overflowWatcher() {
  watcher ??= new ResizeObserver((entries) => {
    for (const { target } of entries) {
      const element = /** @type {HTMLElement} */ (target);
      const overflows = element.scrollHeight > element.clientHeight + 1 || element.scrollWidth > element.clientWidth + 1;
      if (overflows && element.dataset.scrollFocus !== "on") {
        element.dataset.scrollFocus = "on";
        element.setAttribute("tabindex", "0");
        element.setAttribute("role", "region");
        element.setAttribute("aria-label", element.dataset.scrollLabel ?? "Scrollable text");
      } else if (!overflows && element.dataset.scrollFocus === "on") {
        delete element.dataset.scrollFocus;
        element.removeAttribute("tabindex");
        element.removeAttribute("role");
        element.removeAttribute("aria-label");
      }
    }
  });
  return watcher;
}
