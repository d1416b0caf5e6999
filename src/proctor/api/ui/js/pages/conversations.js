// Conversations: the list of imported conversations, and the routes of the list and of one
// conversation's page (conversation.js).

import { latest, query } from "../api.js";
import { h, pager, replace, timeEl } from "../dom.js";
import { conversationPage } from "./conversation.js";

const PAGE = 25;

export const routes = [
  { pattern: /^\/conversations$/, section: "conversations", title: "Conversations", render: listPage },
  { pattern: /^\/conversations\/(.+)$/, section: "conversations", title: "Conversation", render: conversationPage },
];

async function listPage({ main, query: params }) {
  const offset = Number(params.get("offset") ?? 0) || 0;
  const project = params.get("project") ?? "";
  const data = await latest("conversations", `/conversations${query({ limit: PAGE, offset, project })}`);
  const rows = data.conversations.map((row) => {
    const c = row.conversation;
    return h("tr", null,
      h("td", null, h("a", { href: `#/conversations/${encodeURIComponent(c.conversation_id)}` }, c.title || c.conversation_id)),
      h("td", null, row.project),
      h("td", null, c.format),
      h("td", { class: "mono" }, String(row.messages)),
      h("td", { class: "mono" }, String(row.tool_calls)),
      h("td", null, timeEl(c.started_at)),
    );
  });
  replace(main,
    h("h1", null, "Conversations"),
    data.total === 0
      ? h("p", { class: "muted" }, "Nothing imported yet. Run `proctor ingest` or point an agent at the intake endpoint.")
      : h("div", { class: "table-wrap" }, h("table", null,
          h("thead", null, h("tr", null, ["Title", "Project", "Format", "Messages", "Tool calls", "Started"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", null, rows))),
    pager(offset, PAGE, data.conversations.length, data.total, (next) => {
      location.hash = `#/conversations${query({ offset: next || null, project: project || null })}`;
    }),
  );
}
