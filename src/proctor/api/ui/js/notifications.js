// The notifications badge and panel in the header (SPEC SUP-8). The unread count and the
// list stay current without a reload: every few seconds the page asks for the first page
// of notifications with If-None-Match, and the server answers 304 while nothing changed.
// Polling (not EventSource) because it sends the bearer token a server may require and the
// X-Proctor-Client header; it pauses while the tab is hidden. New notifications are
// announced through a polite live region; each item links to its finding on its
// conversation's page (#/conversations/<id>?finding=<finding id>).

import { post, token } from "./api.js";
import { h, replace, when } from "./dom.js";

const POLL_MS = 3000;
const PAGE = 20;

let etag = null;
/** @type {null | { total: number, unread: number, items: any[] }} */
let latest = null;
/** Ids seen so far: a later answer with others announces them. Null until the first. */
let known = null;
let timer = 0;
let inFlight = false;
let again = false;

const badge = h("span", { class: "notif-count", hidden: true });
const toggle = h("button", {
  type: "button", class: "notif-toggle", id: "notifications-toggle",
  "aria-expanded": "false", "aria-controls": "notifications-panel",
  on: { click: () => setOpen(panel.hidden) },
}, "Notifications ", badge);
const live = h("div", { class: "visually-hidden", role: "status", "aria-live": "polite", id: "notifications-live" });
const list = h("ul", { class: "notif-list" });
const markAll = h("button", { type: "button", hidden: true, on: { click: () => markRead({ all: true }) } }, "Mark all read");
const close = h("button", { type: "button", class: "notif-close", "aria-label": "Close notifications",
  on: { click: () => { setOpen(false); toggle.focus(); } } }, "×");
const summary = h("p", { class: "muted notif-summary" });
const panel = h("section", {
  id: "notifications-panel", class: "notif-panel card", hidden: true,
  "aria-labelledby": "notifications-heading",
},
  h("div", { class: "notif-head" },
    h("h2", { id: "notifications-heading" }, "Notifications"),
    markAll,
    close,
  ),
  summary,
  list,
);

/** Put the badge and panel into the header and start following notifications. */
export function start() {
  const slot = document.getElementById("notifications");
  if (!slot) return;
  replace(slot, toggle, panel, live);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !panel.hidden) {
      setOpen(false);
      toggle.focus();
    }
  });
  document.addEventListener("click", (event) => {
    if (!panel.hidden && !slot.contains(/** @type {Node} */ (event.target))) setOpen(false);
  });
  refresh();
}

function setOpen(open) {
  panel.hidden = !open;
  toggle.setAttribute("aria-expanded", String(open));
  if (open) {
    render();
    focusFirst(panel.querySelectorAll("a, button"));
  }
}

/** Focus the first of `elements` that is shown. */
function focusFirst(elements) {
  const shown = [...elements].find((element) => !element.hidden);
  if (shown) /** @type {HTMLElement} */ (shown).focus();
}

function schedule() {
  clearTimeout(timer);
  timer = window.setTimeout(refresh, POLL_MS);
}

/** Ask for the first page; a 304 changes nothing. */
async function refresh(force = false) {
  if (inFlight) {
    again = again || force;
    return;
  }
  if (document.hidden && !force) {
    schedule();
    return;
  }
  inFlight = true;
  try {
    const headers = { Accept: "application/json", "X-Proctor-Client": "ui" };
    const saved = token();
    if (saved) headers.Authorization = `Bearer ${saved}`;
    if (etag && !force) headers["If-None-Match"] = etag;
    const response = await fetch(`/api/notifications?limit=${PAGE}`, { headers, cache: "no-store" });
    if (response.status === 200) {
      etag = response.headers.get("ETag");
      update(await response.json());
    }
  } catch {
    // The server may be restarting: the next poll tries again.
  } finally {
    inFlight = false;
    if (again) {
      again = false;
      refresh(true);
    } else {
      schedule();
    }
  }
}

function update(data) {
  latest = data;
  const fresh = known === null ? [] : data.items.filter((item) => item.unread && !known.has(item.id));
  known = new Set([...(known ?? []), ...data.items.map((item) => item.id)]);
  badge.textContent = String(data.unread);
  badge.hidden = data.unread === 0;
  toggle.setAttribute("aria-label", data.unread ? `Notifications, ${data.unread} unread` : "Notifications");
  toggle.classList.toggle("has-unread", data.unread > 0);
  if (fresh.length === 1) live.textContent = `New notification: ${fresh[0].title}`;
  else if (fresh.length > 1) live.textContent = `${fresh.length} new notifications`;
  render();
}

function render() {
  if (!latest || panel.hidden) return;
  const { items, total, unread } = latest;
  const hadFocus = panel.contains(document.activeElement);
  const focused = focusedRow();
  markAll.hidden = unread === 0;
  summary.textContent = total === 0
    ? "Nothing needs your attention yet. Findings that ask for it (a review request, a high-severity warning, a pause) appear here."
    : `${unread} unread of ${total}${total > items.length ? ` · the newest ${items.length} shown · \`proctor notifications\` lists all` : ""}`;
  replace(list, items.map(row));
  if (focused) refocusRow(focused);
  // A new answer may remove or hide the element that had focus: keep focus in the panel.
  const active = /** @type {HTMLElement | null} */ (document.activeElement);
  if (hadFocus && (!active || !panel.contains(active) || active.hidden)) close.focus();
}

/** The notification whose control has keyboard focus: its id, the control's class, its place. */
function focusedRow() {
  const active = /** @type {HTMLElement | null} */ (document.activeElement);
  const item = active && list.contains(active) ? /** @type {HTMLElement | null} */ (active.closest("li.notif-item")) : null;
  if (!item || !active) return null;
  return { id: item.dataset.id ?? "", control: active.className.split(" ")[0], index: [...list.children].indexOf(item) };
}

/**
 * Give focus back after the list was redrawn (a poll's new answer, or a mark read): the same
 * control of the same notification; if that control is gone (it was marked read), the same
 * control of the next notification that still has one, so a keyboard user marks one after
 * another; else that notification's title.
 */
function refocusRow({ id, control, index }) {
  if (!control) return;
  const rows = [...list.children];
  const same = rows.find((item) => /** @type {HTMLElement} */ (item).dataset.id === id);
  const next = rows.slice(Math.max(index, 0)).map((item) => item.querySelector(`.${control}`)).find(Boolean);
  const target = same?.querySelector(`.${control}`) ?? next ?? same?.querySelector(".notif-title");
  if (target) /** @type {HTMLElement} */ (target).focus();
}

function row(item) {
  const open = h("a", {
    href: item.link, class: "notif-title",
    on: { click: () => { setOpen(false); if (item.unread) markRead({ ids: [item.id] }); } },
  }, item.title);
  return h("li", { class: `notif-item sev-${item.severity}${item.unread ? " unread" : ""}`, dataset: { id: item.id } },
    h("div", { class: "notif-line" },
      h("span", { class: `badge sev-${item.severity}` }, item.severity),
      item.unread ? h("span", { class: "notif-dot", title: "unread" }, h("span", { class: "visually-hidden" }, "unread")) : null,
      open,
    ),
    h("div", { class: "notif-meta muted" },
      `${item.project} · ${item.conversation_title || item.conversation_id} · `,
      h("time", { datetime: item.created_at }, when(item.created_at)),
    ),
    item.unread
      ? h("button", { type: "button", class: "notif-read", "aria-label": `Mark read: ${item.title}`,
          on: { click: () => markRead({ ids: [item.id] }) } }, "Mark read")
      : null,
  );
}

async function markRead(body) {
  try {
    await post("/notifications/read", body);
  } catch (error) {
    live.textContent = `Could not mark read: ${error.message}`;
  }
  const focusInPanel = panel.contains(document.activeElement);
  await refresh(true);
  if (focusInPanel && !panel.hidden && !panel.contains(document.activeElement)) {
    focusFirst(panel.querySelectorAll(".notif-read, .notif-title, button"));
  }
}
