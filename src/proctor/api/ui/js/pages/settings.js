// Settings: the supervisor app switch (HB-1), model connections and the supervisor's model
// (MOD-1, MOD-2), the model pool's limits (MOD-4) and live supervision sessions (SUP-1).
// Connections are shown with the name of the variable that holds their key, never a key;
// adding and removing them stays in the CLI. Every value is checked by the API, whose
// sentence is shown next to the field it names.

import { ApiError, Superseded, latest, post, put, query } from "../api.js";
import { guardLeaving } from "../app.js";
import { errorBox, h, pager, replace, timeEl, toast } from "../dom.js";

const SESSIONS_PAGE = 20;
const POOL_FIELDS = [
  { name: "concurrency", label: "Concurrency", unit: "calls at once", hint: "Model calls in flight at once, 1–4.", step: "1", min: 1, max: 4 },
  { name: "stage_timeout_s", label: "Stage timeout", unit: "seconds", hint: "How long one call may take, retry included: 30–600 seconds.", step: "any", min: 30, max: 600 },
  { name: "capacity_kib", label: "Response capacity", unit: "KiB", hint: "The largest answer accepted, 100–16,384 KiB; a longer one is cut off and fails.", step: "1", min: 100, max: 16384 },
];

export const routes = [
  { pattern: /^\/settings$/, section: "settings", title: "Settings", render: settingsPage },
];

async function settingsPage({ main, query: params, signal }) {
  const sessionsOffset = Number(params.get("sessions") ?? 0) || 0;
  const app = section("app", "Supervisor app");
  const models = section("models", "Model connections");
  const pool = section("pool", "Model pool");
  const sessions = section("sessions", "Live supervision");
  replace(main,
    h("h1", null, "Settings"),
    h("div", { class: "settings" }, app, models, pool, sessions));
  const dirty = [];
  guardLeaving(() => dirty.some((isDirty) => isDirty()));
  await Promise.all([
    load(app, signal, () => renderApp(app)),
    load(models, signal, async () => dirty.push(await renderModels(models))),
    load(pool, signal, async () => dirty.push(await renderPool(pool))),
    load(sessions, signal, () => renderSessions(sessions, sessionsOffset)),
  ]);
}

/** A titled card whose body a loader fills. */
function section(id, title) {
  return h("section", { class: "card settings-section", id: `settings-${id}`, "aria-labelledby": `settings-${id}-title` },
    h("h2", { id: `settings-${id}-title` }, title),
    h("div", { class: "section-body" }, h("p", { class: "muted" }, "Loading…")));
}

/** Run one section's loader; its failure shows in that section only (a missing token stops the page). */
async function load(container, signal, loader) {
  try {
    await loader();
  } catch (error) {
    if (error instanceof Superseded || signal.aborted) return;
    if (error instanceof ApiError && error.status === 401) throw error;
    body(container, errorBox(error));
  }
}

function body(container, ...children) {
  replace(/** @type {HTMLElement} */ (container.querySelector(".section-body")), ...children);
}

/** A `role="switch"` button named by `props["aria-label"]`; Space and Enter toggle it as for any button. */
function switchButton(props, checked, stateText) {
  return h("button", { ...props, type: "button", role: "switch", class: "switch", "aria-checked": String(checked) },
    h("span", { class: "track", "aria-hidden": "true" }),
    stateText);
}

/** Text with `command` spans shown as code (still only text nodes). */
function withCode(text) {
  return text.split("`").map((part, index) => (index % 2 ? h("code", null, part) : part));
}

function setChecked(button, checked) {
  button.setAttribute("aria-checked", String(checked));
}

// The supervisor app switch ---------------------------------------------------------------

async function renderApp(container) {
  const [state, heartbeat] = await Promise.all([latest("settings:app", "/app"), latest("settings:heartbeat", "/heartbeat")]);
  let enabled = Boolean(state.enabled);
  let pending = false;
  const stateText = h("span", { class: "switch-state", "aria-hidden": "true" });
  const meaning = h("p", { id: "app-meaning", class: "meaning" });
  const problem = h("div");
  const button = switchButton({ id: "app-switch", "aria-label": "Supervisor app", "aria-describedby": "app-meaning", on: { click: toggle } }, enabled, stateText);
  const draw = () => {
    setChecked(button, enabled);
    replace(stateText, enabled ? "On" : "Off");
    replace(meaning, enabled
      ? "On: heartbeat plans run when due and reviews can be started."
      : "Off: no heartbeat plan or manual review runs. A run already executing finishes; nothing saved is lost.");
  };
  async function toggle() {
    if (pending) return;
    pending = true;
    button.setAttribute("aria-busy", "true");
    try {
      const answer = await put("/app", { enabled: !enabled });
      enabled = Boolean(answer.enabled);
      replace(problem);
      draw();
      toast(enabled ? "The supervisor app is on." : "The supervisor app is off.");
    } catch (error) {
      replace(problem, errorBox(error));
    } finally {
      pending = false;
      button.removeAttribute("aria-busy");
    }
  }
  draw();
  body(container,
    button,
    meaning,
    problem,
    h("p", { class: "muted small" }, withCode(heartbeatNote(heartbeat))));
}

function heartbeatNote(heartbeat) {
  if (!heartbeat.hosted) return "This server does not run due plans itself (started with --no-heartbeat); `proctor worker` does.";
  const every = heartbeat.interval_seconds != null ? ` every ${Math.round(heartbeat.interval_seconds)} s` : "";
  return `This server checks for due plans${every}; it has run ${heartbeat.plans_run} since it started.`;
}

// Connections and the supervisor's model ----------------------------------------------------

async function renderModels(container) {
  const listing = await latest("settings:connections", "/connections");
  const choice = { ...listing.supervisor };
  const list = listing.connections.length
    ? h("ul", { class: "plain connections" }, listing.connections.map((connection) => h("li", null, connectionCard(connection))))
    : h("p", { class: "muted" }, withCode("No model connections yet. Add one with `proctor models add NAME --model MODEL --api-key-env VARIABLE`: the key is read from that environment variable, never stored."));
  const select = h("select", { id: "supervisor-model", "aria-describedby": "supervisor-state" });
  const textConnections = listing.connections.filter((connection) => connection.kind === "text");
  const fillOptions = () => replace(select,
    h("option", { value: "" }, `Follow the default (${choice.default ?? "none set"})`),
    textConnections.map((connection) => h("option", { value: connection.name }, `${connection.name} · ${connection.provider} ${connection.model}`)),
    choice.pinned && !textConnections.some((connection) => connection.name === choice.pinned)
      && h("option", { value: choice.pinned }, `${choice.pinned} (no longer a text connection)`));
  const status = h("p", { id: "supervisor-state", role: "status" });
  const formError = h("div");
  const saveButton = h("button", { type: "submit", class: "primary" }, "Save model choice");
  const isDirty = () => select.value !== (choice.pinned ?? "");
  const drawChoice = () => {
    select.value = choice.pinned ?? "";
    replace(status, choice.problem
      ? h("span", { class: "problem" }, `The supervisor cannot run: ${choice.problem}`)
      : h("span", { class: "muted" }, `The supervisor ${choice.pinned ? "is pinned to" : "follows the default:"} ${choice.connection}. A pinned model never falls back to another.`));
  };
  const form = h("form", { class: "supervisor-model", on: { submit: async (event) => {
    event.preventDefault();
    try {
      const answer = await put("/supervisor/model", { connection: select.value || null });
      Object.assign(choice, answer);
      replace(formError);
      drawChoice();
      toast(choice.pinned ? `The supervisor uses ${choice.pinned} now.` : "The supervisor follows the default connection now.");
    } catch (error) {
      replace(formError, errorBox(error));
    }
  } } },
    h("label", { for: "supervisor-model" }, "Supervisor model"),
    h("div", { class: "row" }, select, saveButton),
    status,
    formError);
  fillOptions();
  drawChoice();
  body(container,
    list,
    form,
    h("p", { class: "muted small" }, withCode("Add, test or remove connections with `proctor models`; a key is only ever read from the server's environment.")));
  return isDirty;
}

function connectionCard(connection) {
  const key = connection.key_env
    ? [h("code", null, `$${connection.key_env}`), " ",
       h("span", { class: `badge ${connection.has_key ? "key-set" : "key-missing"}` }, connection.has_key ? "set" : "not set")]
    : "none needed";
  return h("article", { class: "connection", "aria-label": `Connection ${connection.name}`, dataset: { connection: connection.name } },
    h("div", { class: "row" },
      h("strong", { class: "name" }, connection.name),
      connection.default && h("span", { class: "badge" }, "default"),
      connection.supervisor && h("span", { class: "badge accent" }, "supervisor"),
      connection.kind !== "text" && h("span", { class: "badge" }, connection.kind)),
    h("dl", { class: "facts" },
      h("dt", null, "Provider"), h("dd", null, connection.provider),
      h("dt", null, "Model"), h("dd", { class: "mono" }, connection.model),
      h("dt", null, "Endpoint"), h("dd", { class: "mono" }, connection.endpoint),
      h("dt", null, "Key"), h("dd", null, key)));
}

// The model pool -------------------------------------------------------------------------------

async function renderPool(container) {
  let saved = await latest("settings:pool", "/model-pool");
  const inputs = {};
  const errors = {};
  const formError = h("div");
  const fields = POOL_FIELDS.map((field) => {
    const id = `pool-${field.name}`;
    inputs[field.name] = h("input", {
      id, name: field.name, type: "number", inputmode: field.step === "1" ? "numeric" : "decimal",
      min: field.min, max: field.max, step: field.step, required: true,
      "aria-describedby": `${id}-hint ${id}-error`,
    });
    errors[field.name] = h("p", { id: `${id}-error`, class: "field-error", "aria-live": "polite" });
    return h("div", { class: "field" },
      h("label", { for: id }, field.label),
      h("div", { class: "row nowrap" }, inputs[field.name], h("span", { class: "muted unit" }, field.unit)),
      h("p", { id: `${id}-hint`, class: "muted hint" }, field.hint),
      errors[field.name]);
  });
  const fill = () => POOL_FIELDS.forEach((field) => { inputs[field.name].value = String(saved[field.name]); });
  const clearErrors = () => {
    replace(formError);
    for (const field of POOL_FIELDS) {
      replace(errors[field.name]);
      inputs[field.name].removeAttribute("aria-invalid");
    }
  };
  const isDirty = () => POOL_FIELDS.some((field) => inputs[field.name].value !== String(saved[field.name]));
  const form = h("form", { class: "pool", novalidate: true, on: { submit: async (event) => {
    event.preventDefault();
    clearErrors();
    const change = {};
    for (const field of POOL_FIELDS) {
      const raw = inputs[field.name].value.trim();
      // An empty or unreadable value goes to the API as typed: its sentence says what is allowed.
      change[field.name] = raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw;
    }
    try {
      saved = await put("/model-pool", change);
      fill();
      toast("Pool limits saved. Runs already started keep the limits they began with.");
    } catch (error) {
      showPoolErrors(error, inputs, errors, formError);
    }
  } } },
    h("div", { class: "pool-fields" }, fields),
    formError,
    h("div", { class: "row" },
      h("button", { type: "submit", class: "primary" }, "Save pool limits"),
      h("button", { type: "button", on: { click: () => { fill(); clearErrors(); } } }, "Undo changes")));
  fill();
  body(container,
    h("p", { class: "muted" }, "One queue serves every model call. A run keeps the limits it started with; changes apply to later runs."),
    form);
  return isDirty;
}

/** Put each of the API's sentences next to the field it names; the rest above the buttons. */
function showPoolErrors(error, inputs, errors, formError) {
  if (!(error instanceof ApiError) || error.status !== 422) {
    replace(formError, errorBox(error));
    return;
  }
  const unplaced = [];
  let first = null;
  for (const part of error.message.split("; ")) {
    const match = part.match(/^([a-z_]+): (.*)$/);
    const name = match && match[1] in inputs ? match[1] : null;
    if (!name) {
      unplaced.push(part);
      continue;
    }
    const label = POOL_FIELDS.find((field) => field.name === name)?.label ?? name;
    replace(errors[name], `${label} ${match[2]}.`);
    inputs[name].setAttribute("aria-invalid", "true");
    first = first ?? inputs[name];
  }
  if (unplaced.length) replace(formError, errorBox(unplaced.join("; ")));
  first?.focus();
}

// Live supervision sessions ----------------------------------------------------------------

async function renderSessions(container, offset) {
  const data = await latest("settings:sessions", `/sessions${query({ limit: SESSIONS_PAGE, offset })}`);
  const connection = data.connection_error
    ? h("p", { class: "problem" }, `Analyses would fail now: ${data.connection_error}`)
    : h("p", { class: "muted" }, `Analyses use ${data.connection}.`);
  if (data.total === 0) {
    body(container,
      h("p", { class: "muted" }, withCode("No conversation is supervised live. Supervision is off until you enable it for a conversation: `proctor supervise enable CONVERSATION`.")),
      connection);
    return;
  }
  body(container,
    connection,
    h("ul", { class: "plain sessions" }, data.sessions.map((status) => h("li", null, sessionRow(status)))),
    pager(offset, SESSIONS_PAGE, data.sessions.length, data.total, (next) => {
      location.hash = `#/settings${query({ sessions: next || null })}`;
    }));
}

function sessionRow(initial) {
  const row = h("article", { class: "session", dataset: { target: initial.label } });
  let status = initial;
  let pending = false;
  const problem = h("div");
  const button = switchButton({ "aria-label": `Supervise ${initial.label}`, on: { click: toggle } }, initial.session.enabled, null);
  const details = h("div", { class: "session-details" });
  const draw = () => {
    const session = status.session;
    setChecked(button, session.enabled);
    const target = session.target_type === "conversation"
      ? h("a", { href: `#/conversations/${encodeURIComponent(session.target_id)}`, class: "mono target" }, status.label)
      : h("span", { class: "mono target" }, status.label);
    const budget = session.budget_calls == null ? "no call limit" : `${status.usage.calls} of ${session.budget_calls} calls`;
    replace(details,
      h("div", { class: "row" }, target,
        h("span", { class: `badge state-${status.state.replace(/[^a-z]+/g, "-")}` }, status.state),
        h("span", { class: "badge" }, session.mode)),
      h("p", { class: "muted small" },
        `${session.triggers.join(", ").replaceAll("_", " ")} · ${budget} this period · ${status.usage.tokens} tokens · `,
        status.last_run
          ? [`last run ${status.last_run.status}, `, timeEl(status.last_run.started_at)]
          : "no run yet"));
  };
  async function toggle() {
    if (pending) return;
    pending = true;
    button.setAttribute("aria-busy", "true");
    const session = status.session;
    const target = encodeURIComponent(session.target_type === "task" ? status.label : session.target_id);
    try {
      status = session.enabled
        ? await post(`/sessions/${target}/disable`)
        : await post(`/sessions/${target}/enable`, {
            // Re-enabling keeps the target's settings (an enable replaces them).
            mode: session.mode, triggers: session.triggers, every_n_steps: session.every_n_steps,
            throttle_seconds: session.throttle_seconds, budget_calls: session.budget_calls,
            budget_tokens: session.budget_tokens, budget_period_seconds: session.budget_period_seconds,
          });
      replace(problem);
      draw();
      toast(`Supervision of ${status.label} ${status.session.enabled ? "enabled" : "disabled"}.`);
    } catch (error) {
      replace(problem, errorBox(error));
    } finally {
      pending = false;
      button.removeAttribute("aria-busy");
    }
  }
  draw();
  replace(row, h("div", { class: "session-line" }, button, details), problem);
  return row;
}
