// Heartbeat plans (SPEC UI-3, HB-2, HB-3): the list with an on/off switch per plan, and an
// editor that works on a draft. Nothing is sent until Save; the API validates the plan and
// its sentence is shown next to the field it names. Leaving with unsaved changes asks first.

import { ApiError, del, get, patch, post } from "../api.js";
import { go, guardLeaving } from "../app.js";
import { errorBox, h, replace, timeEl, toast } from "../dom.js";

const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const INTERVENTIONS = [
  ["suggest", "Suggest tasks and conventions"],
  ["memory_only", "Memory only"],
];
/** API field names (and the plan validator's) → the editor's input ids. */
const FIELD_INPUTS = {
  name: "plan-name", project: "plan-project", scope: "plan-project", recurrence: "plan-recurrence",
  time: "plan-time", weekdays: "plan-weekdays", timezone: "plan-timezone",
  intervention: "plan-intervention", window_hours: "plan-window", enabled: "plan-enabled",
};

export const routes = [
  { pattern: /^\/plans$/, section: "plans", title: "Plans", render: listPage },
  { pattern: /^\/plans\/new$/, section: "plans", title: "New plan", render: (context) => editorPage(context, null) },
  { pattern: /^\/plans\/(.+)$/, section: "plans", title: "Plan", render: (context) => editorPage(context, context.params[0]) },
];

// -- the list ---------------------------------------------------------------------------

async function listPage({ main }) {
  const data = await get("/plans?limit=100");
  replace(main, h("div", { class: "plans-page" },
    h("div", { class: "row spread plans-head" },
      h("h1", null, "Plans"),
      h("a", { class: "button primary", href: "#/plans/new" }, "New plan")),
    h("p", { class: "muted intro" },
      "A plan reviews a project (or every project) on a schedule while the supervisor app is on. ",
      "Switching one on schedules it from now; missed times are not run."),
    data.plans.length
      ? h("ul", { class: "plain plan-list", id: "plan-list" }, data.plans.map((plan) => h("li", null, planCard(plan))))
      : h("p", { class: "muted" }, "No plans yet. Add one to review on a schedule."),
  ));
}

function planCard(plan) {
  const card = h("article", { class: "card plan", dataset: { plan: plan.plan_id }, "aria-label": `Plan ${plan.name}` });
  const draw = () => replace(card,
    h("div", { class: "row spread" },
      h("h2", null, h("a", { href: `#/plans/${encodeURIComponent(plan.plan_id)}` }, plan.name)),
      switchButton(`plan-switch-${plan.plan_id}`, plan.enabled, plan.enabled ? "On" : "Off", `Plan ${plan.name} enabled`, async (button) => {
        button.disabled = true;
        try {
          Object.assign(plan, await patch(`/plans/${encodeURIComponent(plan.plan_id)}`, { enabled: !plan.enabled }));
          draw();
          toast(`Plan ${plan.name} ${plan.enabled ? "on" : "off"}.`);
          /** @type {HTMLElement | null} */ (card.querySelector('[role="switch"]'))?.focus();
        } catch (error) {
          button.disabled = false;
          card.appendChild(errorBox(error));
        }
      })),
    h("p", { class: "plan-facts" },
      `${plan.schedule} (${plan.timezone}) · ${plan.project_name ?? "all projects"} · `,
      plan.intervention === "suggest" ? "suggests" : "memory only",
      plan.window_hours ? ` · last ${plan.window_hours} h` : ""),
    h("p", { class: "muted plan-next" },
      plan.state === "running" ? "Running now." : plan.enabled && plan.next_run_at ? ["Next run ", timeEl(plan.next_run_at)] : "Off: it does not run.",
      plan.last_run_at ? [" · last run ", timeEl(plan.last_run_at), " · ",
        h("a", { href: `#/activity?plan=${encodeURIComponent(plan.plan_id)}` }, "activity")] : ""));
  draw();
  return card;
}

/**
 * An on/off switch (`role="switch"`): a real button, so Space and Enter toggle it.
 * @param {string} id
 * @param {boolean} on
 * @param {string} text the visible state
 * @param {string} label what it switches, for assistive technology
 * @param {(button: HTMLButtonElement) => void} toggle
 */
function switchButton(id, on, text, label, toggle) {
  return h("button", { type: "button", id, class: "switch", role: "switch", "aria-checked": String(on), "aria-label": label,
    on: { click: (event) => toggle(/** @type {HTMLButtonElement} */ (event.currentTarget)) } },
    h("span", { class: "track", "aria-hidden": "true" }),
    h("span", { class: "switch-text", "aria-hidden": "true" }, text));
}

// -- the editor -------------------------------------------------------------------------

async function editorPage({ main }, ref) {
  const [projects, plan] = await Promise.all([
    get("/projects"),
    ref ? get(`/plans/${encodeURIComponent(ref)}`) : Promise.resolve(null),
  ]);
  const saved = plan ? fromPlan(plan) : blankDraft();
  const editor = new PlanEditor(main, plan, saved, projects.projects);
  guardLeaving(() => editor.dirty());
}

function blankDraft() {
  let timezone = "UTC";
  try {
    timezone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    timezone = "UTC";
  }
  return { name: "", project: "", recurrence: "daily", time: "09:00", weekdays: [], timezone,
    intervention: "suggest", window_hours: "", enabled: true };
}

function fromPlan(plan) {
  return {
    name: plan.name, project: plan.project_name ?? "", recurrence: plan.recurrence, time: plan.time_of_day.padStart(5, "0"),
    weekdays: plan.weekdays.map((day) => WEEKDAYS[day]), timezone: plan.timezone, intervention: plan.intervention,
    window_hours: plan.window_hours == null ? "" : String(plan.window_hours), enabled: plan.enabled,
  };
}

/** The plan form over a draft; `saved` is what the server holds (or a blank new plan). */
class PlanEditor {
  constructor(main, plan, saved, projects) {
    this.plan = plan;
    this.saved = saved;
    /** Saved or deleted: the draft is settled and leaving needs no question. */
    this.settled = false;
    this.enabled = saved.enabled;
    this.inputs = {
      name: h("input", { id: "plan-name", name: "name", required: true, maxlength: "200", autocomplete: "off", value: saved.name }),
      project: h("select", { id: "plan-project", name: "project" },
        h("option", { value: "" }, "All projects"),
        projects.map((p) => h("option", { value: p.name, selected: p.name === saved.project }, p.name)),
        saved.project && !projects.some((p) => p.name === saved.project) && h("option", { value: saved.project, selected: true }, saved.project)),
      recurrence: h("select", { id: "plan-recurrence", name: "recurrence", on: { change: () => this.showWeekdays() } },
        h("option", { value: "daily", selected: saved.recurrence === "daily" }, "Every day"),
        h("option", { value: "weekly", selected: saved.recurrence === "weekly" }, "On chosen weekdays")),
      time: h("input", { id: "plan-time", name: "time", type: "time", required: true, value: saved.time }),
      timezone: h("input", { id: "plan-timezone", name: "timezone", required: true, list: "timezones", autocomplete: "off",
        spellcheck: "false", value: saved.timezone }),
      intervention: h("select", { id: "plan-intervention", name: "intervention" },
        INTERVENTIONS.map(([value, text]) => h("option", { value, selected: value === saved.intervention }, text))),
      window_hours: h("input", { id: "plan-window", name: "window_hours", type: "number", min: "1", max: String(24 * 366), step: "1",
        inputmode: "numeric", placeholder: "everything new", value: saved.window_hours }),
    };
    this.days = WEEKDAYS.map((day, index) => h("input", { type: "checkbox", id: `plan-day-${day}`, value: day,
      checked: saved.weekdays.includes(day), "aria-label": WEEKDAY_NAMES[index] }));
    this.weekdays = h("fieldset", { id: "plan-weekdays", class: "weekdays" },
      h("legend", null, "Weekdays"),
      h("div", { class: "row" }, WEEKDAYS.map((day, index) => h("span", { class: "weekday" }, this.days[index],
        h("label", { for: `plan-day-${day}`, "aria-hidden": "true" }, day)))),
      this.fieldError("weekdays"));
    this.switchSlot = h("div", { class: "switch-slot" });
    this.problem = h("div", { class: "form-problem", id: "plan-problem" });
    this.confirmSlot = h("div", { class: "confirm-slot" });
    const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
    this.form = h("form", { class: "card plan-form", id: "plan-form", novalidate: true, on: { submit: (event) => {
      event.preventDefault();
      this.save();
    } } },
      this.field("name", "Name", this.inputs.name),
      this.field("project", "Project", this.inputs.project),
      h("div", { class: "plan-when" },
        this.field("recurrence", "Runs", this.inputs.recurrence),
        this.field("time", "Time of day", this.inputs.time),
        this.field("timezone", "Time zone", this.inputs.timezone)),
      h("datalist", { id: "timezones" }, zones.map((zone) => h("option", { value: zone }))),
      this.weekdays,
      this.field("intervention", "After the review", this.inputs.intervention,
        "Either way the story graph is updated; suggestions wait for you to accept or ignore them."),
      this.field("window_hours", "Only the last … hours", this.inputs.window_hours,
        "Leave empty to review everything new since the plan's last review."),
      this.switchSlot,
      this.problem,
      h("div", { class: "row form-actions" },
        h("button", { type: "submit", class: "primary" }, plan ? "Save" : "Save plan"),
        h("a", { class: "button", href: "#/plans" }, "Cancel"),
        plan && h("button", { type: "button", class: "danger", id: "plan-delete", on: { click: () => this.askDelete() } }, "Delete…")),
      this.confirmSlot);
    replace(main, h("div", { class: "plans-page" },
      h("p", { class: "crumbs" }, h("a", { href: "#/plans" }, "Plans"), " / "),
      h("h1", null, plan ? plan.name : "New plan"),
      plan && h("p", { class: "muted" }, plan.enabled && plan.next_run_at ? ["Next run ", timeEl(plan.next_run_at)] : "Off: it does not run.",
        plan.last_run_at ? [" · last run ", timeEl(plan.last_run_at)] : ""),
      this.form));
    this.drawSwitch();
    this.showWeekdays();
  }

  field(key, label, input, hint) {
    const id = FIELD_INPUTS[key];
    const hintId = hint ? `${id}-hint` : null;
    if (hintId) input.setAttribute("aria-describedby", `${hintId} ${id}-error`);
    else input.setAttribute("aria-describedby", `${id}-error`);
    return h("div", { class: "field" },
      h("label", { for: id }, label),
      input,
      hint && h("p", { class: "muted hint", id: hintId }, hint),
      this.fieldError(key));
  }

  fieldError(key) {
    return h("p", { class: "plan-field-error", id: `${FIELD_INPUTS[key]}-error`, dataset: { field: key }, hidden: true });
  }

  drawSwitch() {
    replace(this.switchSlot,
      h("span", { class: "label", id: "plan-enabled-label" }, "Enabled"),
      switchButton("plan-enabled", this.enabled, this.enabled ? "On: runs on schedule while the app is on" : "Off: saved but never run",
        "Enabled", () => {
          this.enabled = !this.enabled;
          this.drawSwitch();
          /** @type {HTMLElement | null} */ (this.switchSlot.querySelector('[role="switch"]'))?.focus();
        }));
  }

  showWeekdays() {
    this.weekdays.hidden = this.inputs.recurrence.value !== "weekly";
  }

  /** The form as a draft, in the same shape as `saved`. */
  current() {
    const value = (key) => /** @type {HTMLInputElement} */ (this.inputs[key]).value;
    const weekly = value("recurrence") === "weekly";
    return {
      name: value("name").trim(), project: value("project"), recurrence: value("recurrence"), time: value("time"),
      weekdays: weekly ? this.days.filter((box) => box.checked).map((box) => box.value) : [],
      timezone: value("timezone").trim(), intervention: value("intervention"), window_hours: value("window_hours").trim(),
      enabled: this.enabled,
    };
  }

  dirty() {
    if (this.settled) return false;
    const now = this.current();
    const saved = { ...this.saved, weekdays: this.saved.recurrence === "weekly" ? this.saved.weekdays : [] };
    return JSON.stringify(now) !== JSON.stringify(saved);
  }

  /** What to send: every field for a new plan; only what changed for a saved one. */
  body() {
    const now = this.current();
    const hours = now.window_hours === "" ? null : Number(now.window_hours);
    if (!this.plan) {
      const body = { name: now.name, recurrence: now.recurrence, time: now.time, timezone: now.timezone,
        intervention: now.intervention, enabled: now.enabled, window_hours: hours };
      if (now.project) body.project = now.project;
      if (now.recurrence === "weekly") body.weekdays = now.weekdays;
      return body;
    }
    const was = this.saved;
    const body = {};
    for (const key of ["name", "recurrence", "time", "timezone", "intervention", "enabled"]) {
      if (now[key] !== was[key]) body[key] = now[key];
    }
    if (now.recurrence === "weekly" && (was.recurrence !== "weekly" || now.weekdays.join() !== was.weekdays.join())) body.weekdays = now.weekdays;
    if (now.project !== was.project) {
      if (now.project) body.project = now.project;
      else body.all_projects = true;
    }
    if (now.window_hours !== was.window_hours) {
      if (hours === null) body.no_window = true;
      else body.window_hours = hours;
    }
    return body;
  }

  async save() {
    this.clearProblems();
    const body = this.body();
    if (this.plan && Object.keys(body).length === 0) {
      toast("Nothing changed.");
      return;
    }
    try {
      const saved = this.plan
        ? await patch(`/plans/${encodeURIComponent(this.plan.plan_id)}`, body)
        : await post("/plans", body);
      this.settled = true;
      toast(`Plan ${saved.name} saved.`);
      go("/plans");
    } catch (error) {
      this.showProblem(error);
    }
  }

  clearProblems() {
    replace(this.problem);
    for (const slot of this.form.querySelectorAll(".plan-field-error")) {
      replace(slot);
      /** @type {HTMLElement} */ (slot).hidden = true;
    }
    for (const input of this.form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
  }

  /** The API's sentence at the top of the buttons, and each named field's part next to it. */
  showProblem(error) {
    replace(this.problem, errorBox(error));
    if (!(error instanceof ApiError)) return;
    let first = null;
    for (const part of error.message.replace(/^invalid plan: /, "").split("; ")) {
      const match = part.match(/^([a-z_]+)(?:\.\d+)?: (.+)$/);
      const id = match && FIELD_INPUTS[match[1]];
      if (!id) continue;
      const slot = this.form.querySelector(`#${id}-error`);
      if (!slot) continue;
      replace(slot, match[2]);
      /** @type {HTMLElement} */ (slot).hidden = false;
      const input = this.form.querySelector(`#${id}`);
      input?.setAttribute("aria-invalid", "true");
      first = first ?? input;
    }
    const target = first && first.tagName === "FIELDSET" ? first.querySelector("input") : first;
    /** @type {HTMLElement | null} */ (target ?? this.problem.firstElementChild)?.focus?.();
  }

  askDelete() {
    const plan = this.plan;
    const keep = h("button", { type: "button", on: { click: () => {
      replace(this.confirmSlot);
      /** @type {HTMLElement | null} */ (this.form.querySelector("#plan-delete"))?.focus();
    } } }, "Keep it");
    replace(this.confirmSlot, h("div", { class: "confirm", role: "alertdialog", "aria-labelledby": "delete-question" },
      h("p", { id: "delete-question" }, `Delete plan “${plan.name}” and its heartbeat history? Published results stay.`),
      h("div", { class: "row" },
        h("button", { type: "button", class: "danger", on: { click: () => this.remove() } }, "Delete plan"),
        keep)));
    keep.focus();
  }

  async remove() {
    try {
      await del(`/plans/${encodeURIComponent(this.plan.plan_id)}`);
    } catch (error) {
      this.confirmSlot.appendChild(errorBox(error));
      return;
    }
    this.settled = true;
    toast(`Plan ${this.plan.name} deleted.`);
    go("/plans");
  }
}
