// Conversations: the list of imported conversations with their open findings (how many,
// and the highest severity among them), sortable and filterable by them, and the routes
// of the list and of one conversation's page (conversation.js).

import { latest, query } from "../api.js";
import { h, pager, replace, timeEl } from "../dom.js";
import { conversationPage } from "./conversation.js";

const PAGE = 25;
const SORTS = [["started", "Started"], ["open_findings", "Open findings"], ["top_severity", "Top severity"]];
const SEVERITIES = ["high", "medium", "low", "info"];

export const routes = [
  { pattern: /^\/conversations$/, section: "conversations", title: "Conversations", render: listPage },
  { pattern: /^\/conversations\/(.+)$/, section: "conversations", title: "Conversation", render: conversationPage },
];

/** Focus to give back once the list is drawn again for a new address. */
let refocus = /** @type {string | null} */ (null);

async function listPage({ main, query: params }) {
  const state = {
    offset: String(Number(params.get("offset") ?? 0) || 0),
    project: params.get("project") ?? "",
    sort: params.get("sort") ?? "started",
    order: params.get("order") === "asc" ? "asc" : "desc",
    has_open: ["true", "false"].includes(params.get("has_open") ?? "") ? params.get("has_open") : "",
    min_severity: params.get("min_severity") ?? "",
  };
  const offset = Number(state.offset);
  const data = await latest("conversations", `/conversations${query({ ...state, limit: PAGE, offset })}`);
  const go = (changes, focusId) => {
    refocus = focusId ?? null;
    const next = { ...state, offset: "0", ...changes };
    location.hash = `#/conversations${query({
      offset: next.offset === "0" ? null : next.offset, project: next.project || null,
      sort: next.sort === "started" ? null : next.sort, order: next.order === "desc" ? null : next.order,
      has_open: next.has_open || null, min_severity: next.min_severity || null,
    })}`;
  };
  const select = (id, label, field, options) => h("label", { for: id }, label,
    h("select", { id, on: { change: (event) => go({ [field]: event.target.value }, id) } },
      options.map(([value, text]) => h("option", { value, selected: value === state[field] }, text))));
  const rows = data.conversations.map((row) => {
    const c = row.conversation;
    return h("tr", null,
      h("td", null, h("a", { href: `#/conversations/${encodeURIComponent(c.conversation_id)}` }, c.title || c.conversation_id)),
      h("td", null, row.project),
      h("td", null, c.format),
      h("td", { class: "mono" }, String(row.messages)),
      h("td", { class: "mono" }, String(row.tool_calls)),
      h("td", { class: "mono open-findings" }, String(row.open_findings)),
      h("td", null, row.top_severity ? h("span", { class: `badge sev-${row.top_severity}` }, row.top_severity) : h("span", { class: "muted" }, "none")),
      h("td", null, timeEl(c.started_at)),
    );
  });
  const filtered = Boolean(state.has_open || state.min_severity || state.project);
  replace(main,
    h("h1", null, "Conversations"),
    h("form", { class: "row list-controls", "aria-label": "Sort and filter conversations", on: { submit: (event) => event.preventDefault() } },
      select("conversations-sort", "Sort by", "sort", SORTS),
      select("conversations-order", "Sort order", "order", [["desc", "Descending"], ["asc", "Ascending"]]),
      select("conversations-open", "Open findings", "has_open", [["", "Any"], ["true", "Some open"], ["false", "None open"]]),
      select("conversations-severity", "Open finding at least", "min_severity", [["", "Any severity"], ...SEVERITIES.map((s) => [s, s])])),
    data.total === 0
      ? h("p", { class: "muted" }, filtered
        ? "No conversation matches these filters."
        : "Nothing imported yet. Run `proctor ingest` or point an agent at the intake endpoint.")
      : h("div", { class: "table-wrap" }, h("table", null,
          h("thead", null, h("tr", null, ["Title", "Project", "Format", "Messages", "Tool calls", "Open findings", "Top severity", "Started"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", null, rows))),
    pager(offset, PAGE, data.conversations.length, data.total, (next) => go({ offset: String(next) }, null)),
  );
  if (refocus) {
    document.getElementById(refocus)?.focus();
    refocus = null;
  }
}
