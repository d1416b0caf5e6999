// Building the page. Observed content (transcripts, tool output, finding text) is data:
// it only ever becomes text nodes or attribute values, never markup. Nothing here uses
// innerHTML, and a test checks that no file of the UI does.

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

/** A short, readable time ("29 Nov 14:05") from an ISO date, in the viewer's time zone. */
export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(undefined, {
    day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
  });
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
