// JSON shown as a collapsible tree (tool arguments, structured outputs): objects and arrays
// are <details> with a one-line summary, values are text. Everything is text nodes.

import { h } from "./dom.js";

const OPEN_DEPTH = 2;
/** Children shown per object or array before "… N more". */
const MAX_CHILDREN = 200;
const MAX_STRING = 2000;

/**
 * A collapsible view of a JSON value.
 * @param {unknown} value
 * @param {{ label?: string }} [options]
 * @returns {HTMLElement}
 */
export function jsonView(value, options = {}) {
  return h("div", { class: "json-view mono" }, node(value, options.label ?? null, 0));
}

/** Parse text as JSON when it is an object or array; otherwise undefined. */
export function parseStructured(text) {
  if (typeof text !== "string") return undefined;
  const trimmed = text.trim();
  if (!(trimmed.startsWith("{") || trimmed.startsWith("[")) || trimmed.length > 200_000) return undefined;
  try {
    const value = JSON.parse(trimmed);
    return value !== null && typeof value === "object" ? value : undefined;
  } catch {
    return undefined;
  }
}

function node(value, key, depth) {
  const label = key === null ? null : h("span", { class: "json-key" }, `${key}: `);
  if (value === null || typeof value !== "object") {
    return h("div", { class: "json-leaf" }, label, scalar(value));
  }
  const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
  const brackets = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return h("div", { class: "json-leaf" }, label, brackets.join(""));
  const shown = entries.slice(0, MAX_CHILDREN);
  const summary = Array.isArray(value) ? `[ ${entries.length} items ]` : `{ ${entries.length} keys }`;
  return h("details", { class: "json-node", open: depth < OPEN_DEPTH },
    h("summary", null, label, h("span", { class: "muted" }, summary)),
    h("div", { class: "json-children" },
      shown.map(([childKey, child]) => node(child, childKey, depth + 1)),
      entries.length > shown.length && h("div", { class: "muted" }, `… ${entries.length - shown.length} more`)));
}

function scalar(value) {
  if (typeof value === "string") {
    const text = value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}… (${value.length} characters)` : value;
    return h("span", { class: "json-string" }, JSON.stringify(text));
  }
  return h("span", { class: `json-${value === null ? "null" : typeof value}` }, String(value));
}
