// Activity (SPEC UI-3, HB-7): heartbeat runs (with the reviews they triggered) and manual
// reviews, newest first, each with its outcome in words and a link to its result. A plan
// filter and the page live in the address, so a filtered page can be bookmarked.

import { get, latest, query } from "../api.js";
import { h, pager, replace, timeEl } from "../dom.js";

const PAGE = 20;

export const routes = [
  { pattern: /^\/activity$/, section: "activity", title: "Activity", render: activityPage },
];

async function activityPage({ main, query: params }) {
  const offset = Number(params.get("offset") ?? 0) || 0;
  const plan = params.get("plan") ?? "";
  const [plans, data] = await Promise.all([
    get("/plans?limit=100"),
    latest("activity", `/activity${query({ plan, limit: PAGE, offset })}`),
  ]);
  const address = (next) => `#/activity${query({ plan: next.plan || null, offset: next.offset || null })}`;
  const filter = h("select", { id: "activity-plan", on: { change: (event) => {
    location.hash = address({ plan: /** @type {HTMLSelectElement} */ (event.currentTarget).value, offset: 0 });
  } } },
    h("option", { value: "" }, "All activity"),
    plans.plans.map((p) => h("option", { value: p.plan_id, selected: p.plan_id === plan || p.name === plan }, `Plan: ${p.name}`)));
  const entries = data.activity;
  replace(main, h("div", { class: "activity-page" },
    h("div", { class: "row spread activity-head" },
      h("h1", null, "Activity"),
      h("div", { class: "activity-filter" }, h("label", { for: "activity-plan" }, "Show"), filter)),
    entries.length
      ? h("ol", { class: "plain activity-list", id: "activity-list" }, entries.map((entry) => h("li", null, activityCard(entry))))
      : h("p", { class: "muted" }, plan
          ? "This plan has not run yet. It runs at its next scheduled time while the app is on."
          : offset ? "Nothing further back." : "Nothing has run yet. Run a review or add a plan."),
    pager(offset, PAGE, entries.length, null, (next) => { location.hash = address({ plan, offset: next }); }),
  ));
}

function activityCard(entry) {
  const heading = entry.kind === "heartbeat"
    ? ["Plan ", entry.plan_id
        ? h("a", { href: `#/plans/${encodeURIComponent(entry.plan_id)}` }, entry.plan_name ?? entry.plan_id.slice(0, 8))
        : entry.plan_name ?? "(deleted)"]
    : ["Manual review"];
  const facts = [
    entry.scope === "all" ? "all projects" : entry.scope,
    entry.phase && entry.status === "running" ? `phase ${entry.phase}` : null,
    `${entry.model_calls} model call${entry.model_calls === 1 ? "" : "s"}`,
    entry.suggestions != null ? `${entry.suggestions} suggestion${entry.suggestions === 1 ? "" : "s"}` : null,
    duration(entry.started_at, entry.finished_at),
  ].filter(Boolean);
  return h("article", { class: `card activity ${tone(entry)}`, dataset: { activity: entry.activity_id } },
    h("div", { class: "row spread" },
      h("h2", null, heading),
      h("span", { class: "row" }, h("span", { class: "badge outcome" }, entry.outcome), timeEl(entry.started_at))),
    h("p", { class: "muted facts-line" }, facts.join(" · ")),
    entry.error && h("p", { class: "activity-error" }, entry.error),
    entry.summary && h("p", { class: "activity-summary" }, entry.summary),
    entry.result_id && h("p", { class: "activity-links" },
      h("a", { href: `#/reviews?result=${encodeURIComponent(entry.result_id)}` }, `Result ${entry.result_id.slice(0, 8)}`),
      " · ",
      h("a", { href: `#/graph/${encodeURIComponent(entry.result_id)}` }, "story graph")));
}

function tone(entry) {
  if (entry.error || ["failed", "abandoned", "suggestions_failed"].includes(entry.status)) return "tone-bad";
  if (entry.status === "completed") return "tone-good";
  return "tone-quiet";
}

function duration(start, end) {
  if (!start || !end) return null;
  const seconds = Math.max(0, (new Date(end).getTime() - new Date(start).getTime()) / 1000);
  if (Number.isNaN(seconds)) return null;
  if (seconds < 1) return "under a second";
  if (seconds < 90) return `${Math.round(seconds)} s`;
  return `${Math.round(seconds / 60)} min`;
}
