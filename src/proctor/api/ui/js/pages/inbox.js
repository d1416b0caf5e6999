// The findings inbox: findings of every conversation, filtered, grouped by rule or
// conversation, sorted and paged by the server (only the page is drawn, so ten thousand
// findings cost what fifty do). Rows are selected with checkboxes (shift-click selects a
// range) and triaged in bulk with one undo; the keyboard does it all: j/k move, a/r/d/f
// triage the current finding, x selects it, / searches, Enter opens it in its
// conversation. The view lives in the address (#/findings?…), so reload and back keep it.

import { Superseded, latest, post, query } from "../api.js";
import { errorBox, h, replace, timeEl } from "../dom.js";

export const routes = [
  { pattern: /^\/findings$/, section: "findings", title: "Findings", render: inboxPage },
];

const PAGE = 50;
const STATUSES = ["open", "acknowledged", "resolved", "dismissed", "false_positive"];
const SEVERITIES = ["high", "medium", "low", "info"];
const SORTS = [["severity", "Severity"], ["created", "Created"], ["rule", "Rule"], ["conversation", "Conversation"]];
const ACTIONS = [
  // [action, key, button label, past tense]
  ["ack", "a", "Acknowledge", "acknowledged"],
  ["resolve", "r", "Resolve", "resolved"],
  ["dismiss", "d", "Dismiss", "dismissed"],
  ["false_positive", "f", "False positive", "marked false positive"],
];
const DEFAULTS = { status: "open", sort: "severity", order: "desc" };
const FIELDS = ["q", "status", "severity", "rule", "origin", "project", "since", "until", "group", "key", "sort", "order", "offset"];
const number = new Intl.NumberFormat("en");

/** The view the address names, defaults filled in. */
function readState(params) {
  const state = /** @type {Record<string, string>} */ ({});
  for (const field of FIELDS) state[field] = params.get(field) ?? DEFAULTS[field] ?? "";
  if (state.status === "any") state.status = "";
  if (!["rule", "conversation"].includes(state.group)) state.group = "";
  state.offset = String(Math.max(0, Number(state.offset) || 0));
  return state;
}

/** The address of a view: only what differs from the defaults. */
function hashFor(state) {
  const shown = {};
  for (const field of FIELDS) {
    let value = state[field] ?? "";
    if (field === "status" && value === "") value = "any";
    if (value === (DEFAULTS[field] ?? "") || (field === "offset" && value === "0")) continue;
    shown[field] = value;
  }
  return `#/findings${query(shown)}`;
}

/** The API's filter parameters for a view (a group's key narrows to that group). */
function filterParams(state) {
  const params = {
    q: state.q, status: state.status, severity: state.severity, rule: state.rule,
    origin: state.origin, project: state.project,
    since: state.since ? `${state.since}T00:00:00` : "",
    until: state.until ? nextDay(state.until) : "",
  };
  if (state.group === "rule" && state.key) params.rule = state.key;
  if (state.group === "conversation" && state.key) params.conversation = state.key;
  return params;
}

function nextDay(day) {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return "";
  date.setUTCDate(date.getUTCDate() + 1);
  return date.toISOString().slice(0, 19);
}

/** Focus to give back after the page is drawn again for a new address. */
let refocus = /** @type {string | null} */ (null);
/** The last bulk change of this tab: the one the Undo button takes back. */
let lastChange = /** @type {null | { change_id: string, message: string }} */ (null);

async function inboxPage({ main, query: params, signal }) {
  const state = readState(params);
  const root = h("div", { class: "inbox", dataset: { page: "inbox" } });
  replace(main, root);
  const inbox = new Inbox(root, state, signal);
  await inbox.start();
}

class Inbox {
  constructor(root, state, signal) {
    this.root = root;
    this.state = state;
    this.signal = signal;
    this.rows = /** @type {any[]} */ ([]);
    this.labels = /** @type {Record<string, any>} */ ({});
    this.total = 0;
    this.current = 0;
    this.selected = /** @type {Set<string>} */ (new Set());
    this.anchor = /** @type {number | null} */ (null);
    this.announcer = h("p", { class: "visually-hidden", "aria-live": "polite", id: "inbox-announce" });
    this.body = h("div", { class: "inbox-body" });
    this.bulkBar = h("div", { class: "inbox-bulk", role: "group", "aria-label": "Selected findings" });
    this.undoBar = h("div", { class: "inbox-undo", role: "status" });
  }

  async start() {
    // The page of findings loads (into the detached body) while the filters' choices do.
    const [rules, projects] = await Promise.all([
      latest("inbox:rules", `/findings/groups${query({ by: "rule", limit: 100 })}`),
      latest("inbox:projects", "/projects"),
      this.load(),
    ]);
    const filters = this.filters(rules.groups.map((g) => g.key).sort(), projects.projects.map((p) => p.name));
    replace(this.root,
      h("div", { class: "row spread" },
        h("h1", null, "Findings"),
        h("p", { class: "muted inbox-keys", id: "inbox-keys" },
          "Keys: j/k move · x select · a acknowledge · r resolve · d dismiss · f false positive · / search · Enter open")),
      filters, this.bulkBar, this.body, this.undoBar, this.announcer);
    this.drawUndo();
    document.addEventListener("keydown", (event) => this.onKey(event), { signal: this.signal });
    this.syncSelection();
    if (refocus) {
      document.getElementById(refocus)?.focus();
      refocus = null;
    }
    this.root.dataset.ready = "true";
  }

  /** Go to another view (a new address: reload and back keep it). */
  go(changes, focusId) {
    refocus = focusId ?? null;
    const next = { ...this.state, offset: "0", ...changes };
    location.hash = hashFor(next);
  }

  filters(rules, projects) {
    const state = this.state;
    const select = (id, label, field, options) => h("label", { for: id }, label,
      h("select", { id, on: { change: (event) => this.go({ [field]: event.target.value, key: field === "group" ? "" : state.key }, id) } },
        options.map(([value, text]) => h("option", { value, selected: value === state[field] }, text))));
    const any = [["", "Any"]];
    const search = h("input", { id: "inbox-q", type: "search", value: state.q, placeholder: "Words in title or text", autocomplete: "off" });
    const date = (id, label, field) => h("label", { for: id }, label,
      h("input", { id, type: "date", value: state[field], on: { change: (event) => this.go({ [field]: event.target.value }, id) } }));
    return h("form", {
      class: "inbox-filters", role: "search", "aria-label": "Filter findings",
      on: { submit: (event) => { event.preventDefault(); this.go({ q: /** @type {HTMLInputElement} */ (search).value.trim() }, "inbox-q"); } },
    },
      h("label", { for: "inbox-q" }, "Search", search),
      select("inbox-status", "Status", "status", [["", "Any"], ...STATUSES.map((s) => [s, s.replace("_", " ")])]),
      select("inbox-severity", "Severity", "severity", [...any, ...SEVERITIES.map((s) => [s, s])]),
      select("inbox-rule", "Rule", "rule", [...any, ...rules.map((r) => [r, r])]),
      select("inbox-origin", "Origin", "origin", [...any, ["rule", "rule"], ["model", "model"]]),
      select("inbox-project", "Project", "project", [...any, ...projects.map((p) => [p, p])]),
      date("inbox-since", "From", "since"),
      date("inbox-until", "To", "until"),
      select("inbox-group", "Group by", "group", [["", "Nothing"], ["rule", "Rule"], ["conversation", "Conversation"]]),
      select("inbox-sort", "Sort by", "sort", SORTS),
      select("inbox-order", "Order", "order", [["desc", "Descending"], ["asc", "Ascending"]]),
      h("button", { type: "submit" }, "Search"));
  }

  async load() {
    const state = this.state;
    if (state.group && !state.key) return this.loadGroups();
    const path = `/findings${query({ ...filterParams(state), sort: state.sort, order: state.order, limit: PAGE, offset: state.offset })}`;
    let data;
    try {
      data = await latest("inbox:findings", path);
    } catch (error) {
      if (error instanceof Superseded) throw error;
      replace(this.body, errorBox(error), h("button", { type: "button", on: { click: () => this.load().catch(() => {}) } }, "Retry"));
      return;
    }
    this.rows = data.findings;
    this.labels = data.conversations;
    this.total = data.total;
    this.offset = data.offset;
    this.current = Math.min(this.current, Math.max(0, this.rows.length - 1));
    const visible = new Set(this.rows.map((f) => f.finding_id));
    for (const id of [...this.selected]) if (!visible.has(id)) this.selected.delete(id);
    this.draw();
  }

  async loadGroups() {
    const state = this.state;
    const path = `/findings/groups${query({ ...filterParams(state), by: state.group, limit: 100, offset: state.offset })}`;
    const data = await latest("inbox:groups", path);
    this.rows = [];
    this.drawBulk();
    const heading = state.group === "rule" ? "Rule" : "Conversation";
    replace(this.body,
      h("p", { class: "muted", id: "inbox-count" }, `${number.format(data.total)} ${state.group === "rule" ? "rules" : "conversations"} with matching findings`),
      data.groups.length === 0 ? h("p", { class: "muted" }, "No findings match these filters.") :
        h("div", { class: "table-wrap" }, h("table", { class: "inbox-groups" },
          h("caption", { class: "visually-hidden" }, `Findings grouped by ${state.group}`),
          h("thead", null, h("tr", null, [heading, "Findings", "Open", "Top severity", "Newest"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", null, data.groups.map((group) => h("tr", null,
            h("th", { scope: "row" }, h("a", { href: hashFor({ ...state, key: group.key, offset: "0" }) }, group.label),
              group.project ? h("span", { class: "muted" }, ` · ${group.project}`) : null),
            h("td", { class: "mono" }, number.format(group.count)),
            h("td", { class: "mono" }, number.format(group.open)),
            h("td", null, h("span", { class: `badge sev-${group.top_severity}` }, group.top_severity)),
            h("td", null, timeEl(group.latest))))))),
      pagerFor(data.offset, 100, data.groups.length, data.total, (next) => this.go({ offset: String(next) }, null), "groups"));
  }

  draw() {
    const state = this.state;
    const groupLine = state.group && state.key ? h("p", { class: "inbox-crumb" },
      h("a", { href: hashFor({ ...state, key: "", offset: "0" }) }, state.group === "rule" ? "All rules" : "All conversations"),
      " › ", state.group === "rule" ? state.key : (this.labels[state.key]?.title || state.key)) : null;
    const counter = h("p", { class: "muted", id: "inbox-count", "aria-live": "polite" },
      this.total === 0 ? "No findings match these filters." : `${rangeText(this.offset, this.rows.length, this.total)} findings`);
    if (this.rows.length === 0) {
      replace(this.body, groupLine, counter);
      this.drawBulk();
      return;
    }
    const all = h("input", {
      type: "checkbox", id: "inbox-all", "aria-label": "Select all findings on this page",
      on: { change: (event) => this.selectAll(event.target.checked) },
    });
    this.table = h("table", { class: "inbox-table", "aria-describedby": "inbox-keys" },
      h("caption", { class: "visually-hidden" }, "Findings"),
      h("thead", null, h("tr", null,
        h("th", { scope: "col", class: "pick" }, all),
        ["Severity", "Finding", "Rule", "Conversation", "Status", "Created"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, this.rows.map((finding, index) => this.row(finding, index))));
    replace(this.body, groupLine, counter, h("div", { class: "table-wrap" }, this.table),
      pagerFor(this.offset, PAGE, this.rows.length, this.total, (next) => this.go({ offset: String(next) }, null), "findings"));
    this.syncSelection();
    this.markCurrent(false);
  }

  row(finding, index) {
    const label = this.labels[finding.conversation_id];
    const box = h("input", {
      type: "checkbox", class: "pick-one", "aria-label": `Select: ${finding.title}`,
      on: { click: (event) => this.toggle(index, event.target.checked, event.shiftKey) },
    });
    return h("tr", {
      dataset: { finding: finding.finding_id, index: String(index) },
      class: "finding-row",
      on: { click: (event) => { if (event.target === event.currentTarget || event.target.tagName === "TD") this.moveTo(index); } },
    },
      h("td", { class: "pick" }, box),
      h("td", null, h("span", { class: `badge sev-${finding.severity}` }, finding.severity)),
      h("td", null, h("a", { href: openHref(finding), class: "finding-title" }, finding.title)),
      h("td", { class: "mono" }, finding.origin === "model" ? "model" : finding.rule),
      h("td", null, label ? label.title || finding.conversation_id : finding.conversation_id,
        label ? h("span", { class: "muted" }, ` · ${label.project}`) : null),
      h("td", null, finding.status.replace("_", " ")),
      h("td", null, timeEl(finding.created_at)));
  }

  /** Check or uncheck row `index`; with shift, every row from the last one clicked. */
  toggle(index, checked, range) {
    const from = range && this.anchor !== null ? Math.min(this.anchor, index) : index;
    const to = range && this.anchor !== null ? Math.max(this.anchor, index) : index;
    for (let i = from; i <= to; i += 1) {
      const id = this.rows[i].finding_id;
      if (checked) this.selected.add(id);
      else this.selected.delete(id);
    }
    this.anchor = index;
    this.current = index;
    this.syncSelection();
    this.markCurrent(false);
  }

  selectAll(checked) {
    for (const finding of this.rows) {
      if (checked) this.selected.add(finding.finding_id);
      else this.selected.delete(finding.finding_id);
    }
    this.syncSelection();
    this.announce(checked ? `All ${this.rows.length} findings on this page selected.` : "Selection cleared.");
  }

  syncSelection() {
    if (!this.table) return;
    for (const tr of this.table.tBodies[0].rows) {
      const on = this.selected.has(tr.dataset.finding ?? "");
      tr.classList.toggle("selected", on);
      tr.setAttribute("aria-selected", String(on));
      /** @type {HTMLInputElement} */ (tr.querySelector("input.pick-one")).checked = on;
    }
    const all = /** @type {HTMLInputElement | null} */ (document.getElementById("inbox-all"));
    if (all) {
      const count = this.rows.filter((f) => this.selected.has(f.finding_id)).length;
      all.checked = count > 0 && count === this.rows.length;
      all.indeterminate = count > 0 && count < this.rows.length;
    }
    this.drawBulk();
  }

  drawBulk() {
    const count = this.selected.size;
    this.bulkBar.hidden = count === 0;
    replace(this.bulkBar,
      h("span", { id: "inbox-selected" }, `${count} selected`),
      ACTIONS.map(([action, , label]) => h("button", { type: "button", on: { click: () => this.triage([...this.selected], action) } }, label)),
      h("button", { type: "button", on: { click: () => { this.selected.clear(); this.syncSelection(); } } }, "Clear selection"));
  }

  drawUndo() {
    this.undoBar.hidden = !lastChange;
    if (!lastChange) {
      replace(this.undoBar);
      return;
    }
    replace(this.undoBar,
      h("span", null, lastChange.message, " "),
      h("button", { type: "button", class: "primary", id: "inbox-undo", on: { click: () => this.undo() } }, "Undo"),
      h("button", { type: "button", "aria-label": "Close", on: { click: () => { lastChange = null; this.drawUndo(); } } }, "×"));
  }

  /** Apply `action` to the findings `ids` as one change (one undo). */
  async triage(ids, action) {
    if (ids.length === 0) return;
    const [, , , done] = ACTIONS.find(([name]) => name === action) ?? [];
    try {
      const change = await post("/findings/bulk", { ids, action });
      this.selected.clear();
      const what = ids.length === 1 ? `1 finding` : `${ids.length} findings`;
      const message = change.changed === 0
        ? `Nothing changed: ${what} already ${done} or closed.`
        : `${change.changed === ids.length ? what : `${change.changed} of ${what}`} ${done}.`;
      lastChange = change.change_id ? { change_id: change.change_id, message } : null;
      this.drawUndo();
      if (!lastChange) replace(this.undoBar, message);
      this.undoBar.hidden = false;
      this.announce(message + (lastChange ? " Undo is available." : ""));
      await this.load();
    } catch (error) {
      if (!(error instanceof Superseded)) this.body.prepend(errorBox(error));
    }
  }

  async undo() {
    if (!lastChange) return;
    const change = lastChange;
    try {
      const outcome = await post(`/findings/bulk/${encodeURIComponent(change.change_id)}/undo`);
      lastChange = null;
      replace(this.undoBar, `Undone: ${outcome.restored} ${outcome.restored === 1 ? "finding" : "findings"} restored.`);
      this.announce(`Undone: ${outcome.restored} restored.`);
    } catch (error) {
      lastChange = null;
      replace(this.undoBar, errorBox(error));
      return;
    }
    try {
      await this.load();
    } catch (error) {
      if (!(error instanceof Superseded)) this.body.prepend(errorBox(error));
    }
  }

  /** Move the keyboard's current row and say where it is. */
  moveTo(index) {
    if (this.rows.length === 0) return;
    this.current = Math.max(0, Math.min(this.rows.length - 1, index));
    this.markCurrent(true);
  }

  markCurrent(speak) {
    if (!this.table) return;
    for (const tr of this.table.tBodies[0].rows) {
      const on = Number(tr.dataset.index) === this.current;
      tr.classList.toggle("current", on);
      if (on) tr.setAttribute("aria-current", "true");
      else tr.removeAttribute("aria-current");
      if (on && speak) {
        tr.scrollIntoView({ block: "nearest" });
        const finding = this.rows[this.current];
        this.announce(`Finding ${this.offset + this.current + 1} of ${number.format(this.total)}: ${finding.severity}, ${finding.title}, ${finding.status.replace("_", " ")}${this.selected.has(finding.finding_id) ? ", selected" : ""}.`);
      }
    }
  }

  announce(message) {
    // Emptied first, so saying the same thing twice is heard twice.
    replace(this.announcer);
    requestAnimationFrame(() => replace(this.announcer, message));
  }

  onKey(event) {
    if (!this.root.isConnected || event.defaultPrevented) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = /** @type {HTMLElement} */ (event.target);
    if (target.closest("input, select, textarea, [contenteditable=''], [contenteditable='true']")) return;
    if (event.key === "/") {
      event.preventDefault();
      document.getElementById("inbox-q")?.focus();
      return;
    }
    const finding = this.rows[this.current];
    if (event.key === "j") this.moveTo(this.current + 1);
    else if (event.key === "k") this.moveTo(this.current - 1);
    else if (event.key === "x" && finding) {
      this.toggle(this.current, !this.selected.has(finding.finding_id), false);
      this.announce(`${this.selected.has(finding.finding_id) ? "Selected" : "Unselected"}: ${finding.title}. ${this.selected.size} selected.`);
    } else if (event.key === "Enter" && finding) {
      // Links and buttons keep their own Enter.
      if (target.closest("a, button, summary, [role='button']")) return;
      location.hash = openHref(finding);
    } else {
      const triage = ACTIONS.find(([, key]) => key === event.key);
      if (!triage || !finding) return;
      this.triage([finding.finding_id], triage[0]);
    }
    event.preventDefault();
  }
}

function openHref(finding) {
  return `#/conversations/${encodeURIComponent(finding.conversation_id)}?finding=${encodeURIComponent(finding.finding_id)}`;
}

function rangeText(offset, count, total) {
  return count === 0 ? `0 of ${number.format(total)}` : `${number.format(offset + 1)}–${number.format(offset + count)} of ${number.format(total)}`;
}

function pagerFor(offset, limit, count, total, go, what) {
  if (offset === 0 && count >= total) return null;
  return h("nav", { class: "pager", "aria-label": `Pages of ${what}` },
    h("button", { type: "button", disabled: offset === 0, on: { click: () => go(Math.max(0, offset - limit)) } }, "Previous"),
    h("span", { class: "muted" }, rangeText(offset, count, total)),
    h("button", { type: "button", disabled: offset + count >= total, on: { click: () => go(offset + limit) } }, "Next"));
}
