// Talking to Proctor's HTTP API. Requests for one slot of the page (a result's graph, a
// conversation's findings) supersede each other: a late answer to an older request is
// dropped, never shown (SPEC UI-3).

const TOKEN_KEY = "proctor.token";

/** An error the API answered with: its status and its sentence. */
export class ApiError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Thrown for answers to superseded requests; pages ignore it. */
export class Superseded extends Error {}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * Call the API.
 * @param {string} method
 * @param {string} path under /api, e.g. "/findings?conversation=abc"
 * @param {unknown} [body] sent as JSON
 */
export async function call(method, path, body) {
  // The server refuses state changes a page of another site could send (docs/api.md): a
  // body goes as JSON, and every request names its client, which such a page cannot do.
  const headers = { Accept: "application/json", "X-Proctor-Client": "ui" };
  const saved = token();
  if (saved) headers.Authorization = `Bearer ${saved}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`/api${path}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, describe(response.status, data, text));
  return data;
}

function describe(status, data, text) {
  const detail = data && data.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((item) => `${(item.loc ?? []).slice(1).join(".") || "request"}: ${item.msg}`).join("; ");
  }
  return `the server answered ${status}${text ? `: ${text.slice(0, 200)}` : ""}`;
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);
export const put = (path, body) => call("PUT", path, body);
export const patch = (path, body) => call("PATCH", path, body);
export const del = (path) => call("DELETE", path);

const generations = new Map();

/**
 * GET for one slot of the page: when another request for the same slot starts before
 * this one answers, this one's answer is dropped (rejects with `Superseded`).
 * @param {string} slot
 * @param {string} path
 */
export async function latest(slot, path) {
  const generation = (generations.get(slot) ?? 0) + 1;
  generations.set(slot, generation);
  const data = await get(path);
  if (generations.get(slot) !== generation) throw new Superseded(slot);
  return data;
}

/** Query string from an object, skipping empty values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === null || value === undefined || value === "") continue;
    if (Array.isArray(value)) value.forEach((item) => search.append(key, String(item)));
    else search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
