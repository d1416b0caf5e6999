// The review workspace (SPEC UI-3, REV-5, REV-6, REV-10): start a review, follow and control
// the run that holds the one review slot, read a result (summary, change digest, coverage,
// open items), and browse published results and the run history. Live state comes from
// GET /reviews/execution, polled only while a run is active and never after the page is left.

import { Superseded, get, latest, post, query } from "../api.js";
import { errorBox, h, pager, replace, timeEl, toast } from "../dom.js";

const POLL_MS = 800;
const PAGE = 10;
const OPEN_ITEM_EVENTS = 500;
const DEFAULT_BATCH = 150;
/** Run states a stopped run may be resumed from, or cancelled in. */
const RESUMABLE = ["paused", "failed"];
const CANCELLABLE = ["running", "paused", "failed"];

export const routes = [
  { pattern: /^\/reviews$/, section: "reviews", title: "Reviews", render: workspacePage },
];

async function workspacePage({ main, query: params, signal }) {
  const [projects, execution] = await Promise.all([get("/projects"), get("/reviews/execution")]);
  const names = new Map(projects.projects.map((p) => [p.project_id, p.name]));
  const workspace = new Workspace(main, signal, projects.projects, names, params.get("result"));
  await workspace.start(execution);
}

/** The page's parts and the poll that keeps the live part current. */
class Workspace {
  constructor(main, signal, projects, names, selectedResult) {
    this.signal = signal;
    /** @type {Map<string, string>} project names by id */
    this.names = names;
    this.selectedResult = selectedResult;
    this.timer = 0;
    this.wasRunning = false;
    this.runsOffset = 0;
    this.resultsOffset = 0;
    this.live = h("section", { class: "card live", id: "live", "aria-labelledby": "live-heading" });
    this.result = h("section", { class: "card", id: "result", "aria-labelledby": "result-heading" });
    this.results = h("section", { id: "results", "aria-labelledby": "results-heading" });
    this.history = h("section", { id: "history", "aria-labelledby": "history-heading" });
    replace(main, h("div", { class: "reviews-page" },
      h("h1", null, "Reviews"),
      h("div", { class: "review-top" }, this.startForm(projects), this.live),
      this.result,
      h("div", { class: "review-lists" }, this.results, this.history),
    ));
    signal.addEventListener("abort", () => clearTimeout(this.timer));
  }

  async start(execution) {
    this.drawLive(execution);
    this.wasRunning = isRunning(execution);
    await Promise.all([this.loadResult(), this.loadResults(), this.loadHistory()]);
    if (this.wasRunning) this.schedule();
  }

  // -- starting a review ---------------------------------------------------------------

  startForm(projects) {
    const project = h("select", { id: "review-project", name: "project" },
      h("option", { value: "" }, "All projects"),
      projects.map((p) => h("option", { value: p.name }, `${p.name} (${p.conversations})`)));
    const reanalyze = h("input", { id: "review-reanalyze", type: "checkbox", name: "reanalyze" });
    const batch = h("input", { id: "review-batch", type: "number", name: "batch_size", min: "5", max: "500",
      step: "1", value: String(DEFAULT_BATCH), required: true, inputmode: "numeric" });
    const problem = h("div", { class: "form-problem", id: "start-problem" });
    const submit = h("button", { type: "submit", class: "primary" }, "Run review");
    const form = h("form", { class: "card", id: "start-form", "aria-labelledby": "start-heading", on: { submit: async (event) => {
      event.preventDefault();
      replace(problem);
      submit.disabled = true;
      try {
        const body = { reanalyze: reanalyze.checked, batch_size: Number(batch.value) };
        if (project.value) body.project = project.value;
        const run = await post("/reviews", body);
        toast(`Review ${short(run.run_id)} started.`);
        this.selectedResult = null;
        this.watch();
      } catch (error) {
        replace(problem, errorBox(error));
        this.watch();
      } finally {
        submit.disabled = false;
      }
    } } },
      h("h2", { id: "start-heading" }, "Run a review"),
      h("label", { for: "review-project" }, "Project"), project,
      h("div", { class: "check" }, reanalyze,
        h("label", { for: "review-reanalyze" }, "Re-read everything (ignore checkpoints)")),
      h("label", { for: "review-batch" }, "Batch size"), batch,
      h("p", { class: "muted hint" }, "Sources per batch, 5–500: one model call each."),
      problem,
      h("div", { class: "row" }, submit));
    return form;
  }

  // -- the run holding the slot ----------------------------------------------------------

  /** Poll now and keep polling while a run is active (one chain at a time). */
  watch() {
    clearTimeout(this.timer);
    this.poll();
  }

  schedule() {
    clearTimeout(this.timer);
    if (!this.signal.aborted) this.timer = setTimeout(() => this.poll(), POLL_MS);
  }

  async poll() {
    if (this.signal.aborted) return;
    let execution;
    try {
      execution = await get("/reviews/execution");
    } catch (error) {
      if (!this.signal.aborted) this.live.appendChild(errorBox(error));
      return;
    }
    if (this.signal.aborted) return;
    const running = isRunning(execution);
    const focused = this.live.contains(document.activeElement)
      ? /** @type {HTMLElement} */ (document.activeElement).dataset.verb ?? "" : null;
    this.drawLive(execution);
    if (focused !== null) this.refocusLive(focused);
    if (running) {
      this.wasRunning = true;
      this.schedule();
      await this.loadHistory();
    } else {
      if (this.wasRunning && execution.run) toast(`Review ${short(execution.run.run_id)} ${execution.run.shown}.`);
      this.wasRunning = false;
      await Promise.all([this.loadResult(), this.loadResults(), this.loadHistory()]);
    }
  }

  drawLive(execution) {
    const run = execution.run;
    if (!run || !isRunning(execution)) {
      replace(this.live,
        h("h2", { id: "live-heading", tabindex: "-1" }, "Now"),
        h("p", { class: "muted", id: "live-state" }, "No review is running. The next one starts when you run it or a plan is due."));
      return;
    }
    const batches = run.batches_total ? `batch ${Math.min(run.batches_done + 1, run.batches_total)} of ${run.batches_total}` : "preparing batches";
    replace(this.live,
      h("div", { class: "row spread" },
        h("h2", { id: "live-heading", tabindex: "-1" }, "Now"),
        h("span", { class: `badge state-${run.shown}`, id: "live-state" }, run.shown)),
      h("p", null, h("span", { class: "mono" }, short(run.run_id)), ` · ${this.scope(run)} · ${run.trigger} · started `, timeEl(run.created_at)),
      h("dl", { class: "run-facts" },
        h("dt", null, "Phase"), h("dd", { id: "live-phase" }, run.phase),
        h("dt", null, "Batches"), h("dd", null, `${run.batches_done} of ${run.batches_total} done (${batches})`),
        h("dt", null, "Sources read"), h("dd", null, `${run.sources_done} of ${run.sources_total}`),
        run.model_calls > 0 && [h("dt", null, "Model calls"), h("dd", null, String(run.model_calls))]),
      h("progress", { max: String(Math.max(run.sources_total, 1)), value: String(run.sources_done), "aria-label": "Sources read" }),
      !execution.in_this_server && execution.slot_holder &&
        h("p", { class: "muted" }, "Executed by another Proctor process; its controls still work from here."),
      h("div", { class: "row", role: "group", "aria-label": "Run controls" }, this.controls(run)),
      h("div", { class: "form-problem", id: "live-problem" }),
    );
  }

  controls(run) {
    const stopping = run.shown === "pausing" || run.shown === "cancelling";
    return [
      run.status === "running" && !stopping && this.action(run, "pause", "Pause"),
      RESUMABLE.includes(run.status) && !run.active && this.action(run, "resume", "Resume"),
      CANCELLABLE.includes(run.status) && run.shown !== "cancelling" && this.action(run, "cancel", "Cancel"),
    ];
  }

  /** A button that pauses, resumes or cancels a run, then follows its state. */
  action(run, verb, label) {
    return h("button", { type: "button", dataset: { verb }, on: { click: async (event) => {
      const button = /** @type {HTMLButtonElement} */ (event.currentTarget);
      button.disabled = true;
      try {
        const updated = await post(`/reviews/${encodeURIComponent(run.run_id)}/${verb}`);
        toast(`Review ${short(updated.run_id)}: ${updated.shown}.`);
      } catch (error) {
        const where = button.closest("tr")?.querySelector(".row-problem") ?? this.live.querySelector("#live-problem");
        if (where) replace(where, errorBox(error));
        button.disabled = false;
        return;
      }
      this.watch();
    } } }, label);
  }

  /** Keep keyboard focus in the live card when it is redrawn: the same control, if still offered. */
  refocusLive(verb) {
    const same = verb ? this.live.querySelector(`button[data-verb="${verb}"]`) : null;
    const target = /** @type {HTMLElement | null} */ (same ?? this.live.querySelector("button") ?? this.live.querySelector("h2"));
    target?.focus();
  }

  scope(run) {
    return run.project_id ? this.names.get(run.project_id) ?? `project ${short(run.project_id)}` : "all projects";
  }

  // -- one result --------------------------------------------------------------------------

  loadResult() {
    return this.guard(this.result, () => this.drawResult());
  }

  /**
   * Run one section's load: a superseded answer is dropped; an error replaces the section's
   * content with the API's sentence (the rest of the page keeps working).
   */
  async guard(section, load) {
    try {
      await load();
    } catch (error) {
      if (error instanceof Superseded || this.signal.aborted) return;
      replace(section, errorBox(error));
    }
  }

  async drawResult() {
    let ref = this.selectedResult;
    if (!ref) {
      const newest = await latest("reviews:newest", "/results?limit=1");
      ref = newest.results[0]?.result_id ?? null;
    }
    if (!ref) {
      replace(this.result, h("h2", { id: "result-heading" }, "Latest result"),
        h("p", { class: "muted" }, "Nothing published yet. Run a review to get a summary, a change digest and open items."));
      return;
    }
    const path = `/results/${encodeURIComponent(ref)}`;
    const [overview, graph] = await Promise.all([
      latest("reviews:result", `${path}/overview`),
      latest("reviews:open-items", `${path}/graph${query({ limit: OPEN_ITEM_EVENTS })}`),
    ]);
    if (this.signal.aborted) return;
    replace(this.result, ...resultBody(overview, graph.open_items, Boolean(this.selectedResult)));
  }

  // -- lists -----------------------------------------------------------------------------

  loadResults() {
    return this.guard(this.results, () => this.drawResults());
  }

  async drawResults() {
    const data = await latest("reviews:results", `/results${query({ limit: PAGE, offset: this.resultsOffset })}`);
    if (this.signal.aborted) return;
    const selected = this.selectedResult;
    const rows = data.results.map((r) => h("tr", null,
      h("td", null, h("a", { href: `#/reviews?result=${encodeURIComponent(r.result_id)}`,
        "aria-current": selected && r.result_id.startsWith(selected) ? "true" : null }, timeEl(r.created_at))),
      h("td", null, r.project_name ?? "all projects"),
      h("td", null, r.trigger),
      h("td", { class: "mono" }, `${r.coverage.sources_read}/${r.coverage.sources_total}`,
        !r.complete && h("span", { class: "badge partial" }, "partial"))));
    replace(this.results,
      h("h2", { id: "results-heading" }, "Results"),
      rows.length
        ? h("div", { class: "table-wrap" }, h("table", { class: "stack-table" },
            h("thead", null, h("tr", null, ["Published", "Scope", "Trigger", "Sources read"].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", null, rows)))
        : h("p", { class: "muted" }, "No results yet."),
      pager(this.resultsOffset, PAGE, data.results.length, null, (next) => {
        this.resultsOffset = next;
        this.loadResults();
      }));
  }

  loadHistory() {
    return this.guard(this.history, () => this.drawHistory());
  }

  async drawHistory() {
    const data = await latest("reviews:history", `/reviews${query({ limit: PAGE, offset: this.runsOffset })}`);
    if (this.signal.aborted) return;
    const rows = data.reviews.map((run) => h("tr", { dataset: { run: run.run_id } },
      h("td", null, timeEl(run.created_at), h("div", { class: "mono muted" }, short(run.run_id))),
      h("td", null, this.scope(run), h("div", { class: "muted" }, run.trigger + (run.reanalyze ? " · re-read" : ""))),
      h("td", null, h("span", { class: `badge state-${run.shown}` }, run.shown.replace("_", " ")),
        run.error && h("div", { class: "muted run-error" }, run.error)),
      h("td", { class: "mono" }, `${run.sources_done}/${run.sources_total}`),
      h("td", null,
        run.result_id && h("a", { href: `#/reviews?result=${encodeURIComponent(run.result_id)}` }, "Result"),
        !run.active && h("div", { class: "row" },
          RESUMABLE.includes(run.status) && this.action(run, "resume", "Resume"),
          CANCELLABLE.includes(run.status) && run.status !== "running" && this.action(run, "cancel", "Cancel")),
        h("div", { class: "row-problem" }))));
    const focused = this.focusedInHistory();
    replace(this.history,
      h("h2", { id: "history-heading" }, "History"),
      rows.length
        ? h("div", { class: "table-wrap" }, h("table", { class: "stack-table" },
            h("thead", null, h("tr", null, ["Started", "Scope", "Status", "Sources"].map((t) => h("th", { scope: "col" }, t)),
              h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Result and actions")))),
            h("tbody", null, rows)))
        : h("p", { class: "muted" }, "No review has run yet."),
      pager(this.runsOffset, PAGE, data.reviews.length, null, (next) => {
        this.runsOffset = next;
        this.loadHistory();
      }));
    if (focused) this.refocusHistory(focused);
  }

  /** Which run's control had keyboard focus in the history, if one did. */
  focusedInHistory() {
    const active = /** @type {HTMLElement | null} */ (document.activeElement);
    if (!active || !this.history.contains(active)) return null;
    return { run: active.closest("tr")?.dataset.run ?? null, verb: active.dataset.verb ?? "" };
  }

  /**
   * Keep keyboard focus in the history when it is redrawn (a poll may redraw it between a
   * key that focuses Resume and the Enter that presses it): the same control of the same
   * run if still offered, else that run's row, else the heading.
   */
  refocusHistory({ run, verb }) {
    const row = run ? this.history.querySelector(`tr[data-run="${CSS.escape(run)}"]`) : null;
    const same = row && verb ? row.querySelector(`button[data-verb="${CSS.escape(verb)}"]`) : null;
    const heading = /** @type {HTMLElement | null} */ (this.history.querySelector("h2"));
    if (heading && !same) heading.tabIndex = -1;
    /** @type {HTMLElement | null} */ (same ?? heading)?.focus();
  }
}

function resultBody(overview, openItems, chosen) {
  const r = overview.result;
  const totals = overview.totals;
  const c = r.coverage;
  const more = totals.open_items - openItems.length;
  return [
    h("div", { class: "row spread" },
      h("h2", { id: "result-heading" }, chosen ? "Result" : "Latest result"),
      h("span", { class: "row" },
        chosen && h("a", { href: "#/reviews" }, "Show the latest"),
        h("a", { href: `#/graph/${encodeURIComponent(r.result_id)}` }, "Open in the story graph"))),
    h("p", { class: "muted" },
      h("span", { class: "mono" }, short(r.result_id)), ` · ${r.project_name ?? "all projects"} · ${r.trigger} · published `, timeEl(r.created_at),
      " ", r.complete ? h("span", { class: "badge complete" }, "complete") : h("span", { class: "badge partial" }, "partial")),
    h("h3", null, "Summary"),
    h("p", { id: "result-summary" }, r.summary),
    h("h3", null, "Change digest"),
    h("p", { id: "result-digest" }, r.change_digest),
    h("dl", { class: "run-facts" },
      h("dt", null, "Coverage"), h("dd", null, coverageWords(c)),
      c.sources_omitted > 0 && [h("dt", null, "Omitted"), h("dd", null, `${c.sources_omitted} (conversations deleted during the run)`)],
      c.gaps.length > 0 && [h("dt", null, "Gaps"), h("dd", null, c.gaps.join("; "))],
      h("dt", null, "Semantic layer"), h("dd", null, c.semantic + (c.semantic_note ? `: ${c.semantic_note}` : "")),
      h("dt", null, "Graph"), h("dd", null, `${totals.events} events, ${totals.entities} entities, ${totals.relations} relations, ${totals.story_lines} story lines`)),
    h("h3", null, `Open items (${totals.open_items})`),
    openItems.length
      ? h("ul", { class: "open-items", id: "open-items" }, openItems.map((item) => h("li", null,
          h("span", { class: "title" }, item.title),
          item.status !== "open" && [" ", h("span", { class: "badge" }, item.status)],
          h("div", { class: "muted" }, item.detail))))
      : h("p", { class: "muted" }, "Nothing left open."),
    more > 0 && h("p", { class: "muted" }, `${more} more in the story graph.`),
  ];
}

function isRunning(execution) {
  return Boolean(execution.slot_holder) || Boolean(execution.run && execution.run.active);
}

function coverageWords(c) {
  return `${c.sources_read} of ${c.sources_total} sources read`;
}

function short(id) {
  return String(id).slice(0, 8);
}
