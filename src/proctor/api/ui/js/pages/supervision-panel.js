// Supervision of one conversation from the UI (SUP-1): the same operations as
// `proctor supervise …` — enable with a mode and trigger(s), disable, see the state, the
// last run and the budget used ("supervision paused: budget" once it is spent), and
// "Run now", which the server queues and answers at once (the run then shows as the last
// run). Without a usable model connection the panel says so and links to Settings.

import { ApiError, get, latest, post } from "../api.js";
import { errorBox, h, replace, timeEl, toast } from "../dom.js";

const MODES = [
  ["general", "General: anything worth a person's attention"],
  ["challenge", "Challenge: question the agent's claims"],
  ["evidence", "Evidence: claims without proof"],
  ["goal", "Goal: drift from what the user asked"],
  ["risk", "Risk: destructive or unsafe actions"],
];
const TRIGGERS = [
  ["after_reply", "After each agent reply"],
  ["key_event", "On key events (failures, task changes)"],
  ["run_end", "When the run ends"],
];

/**
 * Draw the supervision panel of one conversation into `container`.
 * @param {HTMLElement} container
 * @param {{ conversationId: string, signal?: AbortSignal }} options
 */
export async function renderSupervisionPanel(container, { conversationId, signal }) {
  const target = encodeURIComponent(conversationId);
  const [page, status] = await Promise.all([
    latest(`sessions:connection:${conversationId}`, "/sessions?limit=1"),
    sessionOf(target),
  ]);
  if (signal?.aborted) return;
  const redraw = async () => {
    try {
      await renderSupervisionPanel(container, { conversationId, signal });
    } catch (error) {
      container.appendChild(errorBox(error));
    }
  };
  const session = status?.session;
  const enabled = Boolean(session?.enabled);
  const state = status ? status.state : "off";
  const live = h("p", { class: "muted supervision-note", role: "status" });

  const mode = h("select", { id: "supervision-mode", name: "mode" },
    MODES.map(([value, label]) => h("option", { value, selected: (session?.mode ?? "general") === value }, label)));
  const chosen = new Set(session ? session.triggers : ["after_reply"]);
  const triggers = TRIGGERS.map(([value, label]) => h("label", { class: "row" },
    h("input", { type: "checkbox", name: "trigger", value, checked: chosen.has(value) }), label));
  const form = h("form", { class: "supervision-form", "aria-label": "Supervision settings", on: {
    submit: async (event) => {
      event.preventDefault();
      const picked = [...form.querySelectorAll("input[name=trigger]:checked")].map((input) => /** @type {HTMLInputElement} */ (input).value);
      if (!picked.length) {
        replace(live, "Choose at least one trigger.");
        return;
      }
      try {
        await post(`/sessions/${target}/enable`, { mode: /** @type {HTMLSelectElement} */ (mode).value, triggers: picked });
        toast(enabled ? "Supervision settings saved." : "Supervision enabled.");
        await redraw();
        /** @type {HTMLElement | null} */ (container.querySelector(".supervision-form button[type=submit]"))?.focus();
      } catch (error) {
        replace(live, errorBox(error));
      }
    },
  } },
    h("div", { class: "row" }, h("label", { for: "supervision-mode" }, "Mode"), mode),
    h("fieldset", null, h("legend", null, "Triggers"), triggers),
    h("div", { class: "row", role: "group", "aria-label": "Supervision actions" },
      h("button", { type: "submit" }, enabled ? "Save settings" : "Enable supervision"),
      enabled && h("button", { type: "button", on: { click: async () => {
        try {
          await post(`/sessions/${target}/disable`);
          toast("Supervision disabled.");
          await redraw();
          /** @type {HTMLElement | null} */ (container.querySelector(".supervision-form button[type=submit]"))?.focus();
        } catch (error) {
          replace(live, errorBox(error));
        }
      } } }, "Disable supervision"),
      h("button", { type: "button", class: "run-now", disabled: Boolean(page.connection_error), on: { click: async () => {
        try {
          const queued = await post(`/sessions/${target}/run`);
          replace(live, `Analysis ${queued.status} (mode ${queued.mode}); its result shows as the last run.`);
          if (status) watchRun(container, target, status.last_run?.run_id ?? null, redraw);
        } catch (error) {
          replace(live, error instanceof ApiError ? error.message : String(error));
        }
      } } }, "Run now"),
      h("button", { type: "button", on: { click: () => { redraw(); } } }, "Refresh")));

  replace(container,
    h("h2", null, "Supervision"),
    page.connection_error
      ? h("div", { class: "warning supervision-no-model", role: "note" },
          h("p", null, `No model connection the supervisor can use: ${page.connection_error}`),
          h("p", null, h("a", { href: "#/settings" }, "Add or choose one in Settings"), " — until then nothing is analysed."))
      : h("p", { class: "muted" }, `Model: ${page.connection}`),
    h("p", { class: "supervision-state" },
      h("strong", null, "State: "),
      h("span", { class: `badge state-${state.replace(/[^a-z]+/g, "-")}` }, state === "off" ? "off (not supervised)" : state)),
    state === "paused: budget" && status && h("p", { class: "warning budget-paused", role: "note" },
      "Supervision paused: budget — this period's budget is spent; it resets ", timeEl(status.period_ends_at), "."),
    status && h("p", { class: "muted supervision-usage" }, usageText(status)),
    status?.last_run ? lastRun(status.last_run) : h("p", { class: "muted" }, "No analysis has run yet."),
    form,
    live);
}

/** Check the session every second (for two minutes at most) until a newer run ended, then redraw. */
function watchRun(container, target, before, redraw) {
  let tries = 120;
  const check = async () => {
    if (!container.isConnected || tries-- <= 0) return;
    try {
      const now = await sessionOf(target);
      const run = now?.last_run;
      if (run && run.run_id !== before && run.status !== "running") {
        await redraw();
        return;
      }
    } catch {
      return;
    }
    setTimeout(check, 1000);
  };
  setTimeout(check, 1000);
}

async function sessionOf(target) {
  try {
    return await get(`/sessions/${target}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

function usageText(status) {
  const session = status.session;
  const calls = session.budget_calls == null ? `${status.usage.calls} calls (no limit)` : `${status.usage.calls} of ${session.budget_calls} calls`;
  const tokens = session.budget_tokens == null ? `${status.usage.tokens.toLocaleString()} tokens` : `${status.usage.tokens.toLocaleString()} of ${session.budget_tokens.toLocaleString()} tokens`;
  return `Budget used this period: ${calls}, ${tokens}. Mode ${session.mode}; triggers ${session.triggers.join(", ")}.`;
}

function lastRun(run) {
  return h("p", { class: "supervision-last-run" },
    h("strong", null, "Last run: "),
    `${run.status} · ${run.mode} · `, timeEl(run.finished_at ?? run.started_at),
    run.status === "ok" ? ` · ${run.findings} finding${run.findings === 1 ? "" : "s"} · ${run.input_tokens + run.output_tokens} tokens` : "",
    run.error ? ` · ${run.error}` : "");
}
