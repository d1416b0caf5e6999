// The story graph's detail panel: one object a result published (GET
// /results/{ref}/objects/{id}) with previews of its sources, a person's edits
// (confirm / revise / remove), and for an entity the knowledge-base preview → confirm.

import { Superseded, get, latest, post } from "../api.js";
import { errorBox, h, replace, timeEl, toast } from "../dom.js";
import { stateBadge } from "./graph-timeline.js";

const EDITABLE = new Set(["entity", "relation", "entity_change"]);
const GONE = new Set(["removed", "revoked"]);

/** Path segments of a source id (it may hold "/" and ":"), each encoded. */
export function sourcePath(sourceType, sourceId) {
  return `${encodeURIComponent(sourceType)}/${sourceId.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * The panel beside the timeline or list.
 * `onEdited` runs after a confirm / revise / remove (the page reloads its graph);
 * `onContinue(entityId)` focuses the continue-discussion card on an entity.
 */
export class DetailPanel {
  constructor(container, resultId, { onEdited, onContinue, onSelect, names }) {
    this.names = names;
    this.container = container;
    this.resultId = resultId;
    this.onEdited = onEdited;
    this.onContinue = onContinue;
    this.onSelect = onSelect;
    this.empty();
  }

  empty() {
    replace(this.container,
      h("h2", null, "Details"),
      h("p", { class: "muted" }, "Select an entity, relation or event to see it with its sources."));
  }

  /** Show one object (type is only a hint: the API answers with the object's type). */
  async show(objectId, { focus = false } = {}) {
    replace(this.container, h("h2", null, "Details"), h("p", { class: "muted" }, "Loading…"));
    // While loading, a "go to its details" button asks for focus through this flag
    // (graph-timeline.js): the heading it would focus does not exist yet.
    this.container.dataset.loading = "true";
    let data;
    try {
      data = await latest("graph:detail", `/results/${encodeURIComponent(this.resultId)}/objects/${encodeURIComponent(objectId)}`);
    } catch (error) {
      if (error instanceof Superseded) return;
      delete this.container.dataset.loading;
      replace(this.container, h("h2", null, "Details"), errorBox(error));
      return;
    }
    delete this.container.dataset.loading;
    this.render(data);
    const asked = this.container.dataset.focusWhenLoaded === "true";
    delete this.container.dataset.focusWhenLoaded;
    if (focus || asked) /** @type {HTMLElement | null} */ (this.container.querySelector("h2"))?.focus();
  }

  render(data) {
    const object = data.entity ?? data.relation ?? data.change ?? data.event;
    const heading = h("h2", { tabindex: "-1", class: "detail-title" }, titleOf(data, object));
    const gone = GONE.has(object.state);
    replace(this.container,
      heading,
      h("div", { class: "row" },
        h("span", { class: "badge" }, data.object_type.replace("_", " ")),
        object.kind && h("span", { class: "badge" }, object.kind.replaceAll("_", " ")),
        object.type && h("span", { class: "badge" }, object.type),
        object.state && stateBadge(object.state),
        object.layer && h("span", { class: "muted" }, `${object.layer} layer`)),
      fields(data, object, this.names(), this.onSelect),
      EDITABLE.has(data.object_type) && (gone
        ? h("p", { class: "muted" }, `A person ${object.state} this ${data.object_type.replace("_", " ")}; automatic runs leave it alone.`)
        : this.actions(data, object)),
      data.object_type === "entity" && !gone && this.entityTools(object),
      h("h3", null, `Sources (${data.sources.length}${data.source_count > data.sources.length ? ` of ${data.source_count}` : ""})`),
      data.sources.length
        ? h("ul", { class: "plain sources" }, data.sources.map((source) => sourceItem(source)))
        : h("p", { class: "muted" }, "This result cited no sources for it."),
      data.edits.length > 0 && h("div", null,
        h("h3", null, "A person's edits"),
        h("ul", { class: "edits" }, data.edits.map((edit) => h("li", null, `${edit.action} · `, timeEl(edit.created_at))))),
    );
  }

  actions(data, object) {
    const type = data.object_type;
    const id = data.object_id;
    const status = h("div", { class: "action-status" });
    const form = reviseForm(type, object, async (revision) => {
      await this.edit(type, id, "revise", revision, status);
    });
    form.hidden = true;
    const reviseButton = h("button", { type: "button", "aria-expanded": "false", "aria-controls": "revise-form", on: { click: () => {
      form.hidden = !form.hidden;
      reviseButton.setAttribute("aria-expanded", String(!form.hidden));
      if (!form.hidden) /** @type {HTMLElement | null} */ (form.querySelector("input, textarea"))?.focus();
    } } }, "Revise");
    return h("div", { class: "detail-actions" },
      h("div", { class: "row", role: "group", "aria-label": "Edit this object" },
        object.state !== "confirmed" && h("button", { type: "button", on: { click: () => this.edit(type, id, "confirm", undefined, status) } }, "Confirm"),
        reviseButton,
        h("button", { type: "button", class: "danger", on: { click: () => {
          if (window.confirm(`Remove this ${type.replace("_", " ")}? Automatic runs will not bring it back.`)) this.edit(type, id, "remove", undefined, status);
        } } }, "Remove")),
      form,
      status);
  }

  async edit(type, id, action, body, status) {
    try {
      await post(`/graph/${type}/${encodeURIComponent(id)}/${action}`, body);
    } catch (error) {
      replace(status, errorBox(error));
      return;
    }
    const done = { confirm: "confirmed", revise: "revised", remove: "removed" }[action];
    toast(`The ${type.replace("_", " ")} is ${done}.`);
    await Promise.all([this.onEdited(), this.show(id, { focus: true })]);
  }

  entityTools(entity) {
    const area = h("div", { class: "kb-area", "aria-live": "polite" });
    return h("div", { class: "entity-tools" },
      h("div", { class: "row" },
        h("button", { type: "button", on: { click: () => this.onContinue(entity) } }, "Continue discussion about it"),
        h("button", { type: "button", on: { click: () => this.previewNote(entity, area) } }, "Preview knowledge-base note")),
      area);
  }

  async previewNote(entity, area) {
    replace(area, h("p", { class: "muted" }, "Preparing the note…"));
    let preview;
    try {
      preview = await post("/knowledge/preview", { result: this.resultId, entity: entity.entity_id });
    } catch (error) {
      replace(area, errorBox(error));
      return;
    }
    const verb = preview.mode === "create" ? "create the entry" : "append to the entry";
    const confirm = h("button", { type: "button", class: "primary", on: { click: async () => {
      confirm.setAttribute("disabled", "");
      try {
        const written = await post("/knowledge/confirm", { digest: preview.digest, entry: preview.entry, text: preview.text, base: preview.base });
        replace(area, h("p", { class: "kb-written" }, `Written (${written.mode}, ${written.chars.toLocaleString()} characters) to `, h("code", null, written.path)));
        toast("Knowledge-base note written.");
      } catch (error) {
        confirm.removeAttribute("disabled");
        area.appendChild(errorBox(error));
      }
    } } }, "Write this note");
    replace(area,
      h("p", null, `This will ${verb} `, h("code", null, preview.entry), ` in the ${preview.base} knowledge base`,
        preview.existing_chars ? ` (now ${preview.existing_chars.toLocaleString()} characters)` : "", ". Exactly this text:"),
      h("pre", { class: "kb-preview", tabindex: "0", "aria-label": "Knowledge-base note text" }, preview.text),
      h("div", { class: "row" },
        confirm,
        h("button", { type: "button", on: { click: () => replace(area) } }, "Cancel")));
  }
}

function titleOf(data, object) {
  if (data.entity) return object.name;
  if (data.event) return object.title;
  if (data.relation) return `Relation: ${object.type}`;
  return object.description || `Change: ${object.kind}`;
}

function fields(data, object, names, select) {
  const rows = [];
  const add = (term, ...value) => rows.push(h("dt", null, term), h("dd", null, ...value));
  if (data.entity) {
    if (object.description) add("What it is", object.description);
    if (object.identity_key) add("Identity", h("code", null, object.identity_key));
  } else if (data.relation) {
    const entity = (id) => h("button", { type: "button", class: "linkish", on: { click: () => select({ type: "entity", id }) } },
      names.get(id) ?? id.slice(0, 8));
    add("From", entity(object.from_entity_id));
    add("To", entity(object.to_entity_id));
    if (object.reason) add("Why", object.reason);
  } else if (data.change) {
    if (object.description) add("Change", object.description);
  } else if (data.event) {
    add("When", timeEl(object.occurred_at));
    add("Outcome", object.outcome);
    if (object.summary) add("Summary", object.summary);
    if (object.conversation_id) add("Conversation", h("a", { href: `#/conversations/${encodeURIComponent(object.conversation_id)}` }, "open transcript"));
  }
  return rows.length ? h("dl", { class: "fields" }, rows) : null;
}

function reviseForm(type, object, submit) {
  const inputs = [];
  const field = (name, label, value, multiline) => {
    const id = `revise-${name}`;
    const input = multiline
      ? h("textarea", { id, name, rows: "3" }, value ?? "")
      : h("input", { id, name, type: "text", value: value ?? "" });
    inputs.push([name, input, value ?? ""]);
    return [h("label", { for: id }, label), input];
  };
  const parts = type === "entity"
    ? [field("name", "Name", object.name), field("description", "Description", object.description, true)]
    : type === "relation"
      ? [field("kind", "Type", object.type), field("reason", "Why", object.reason, true)]
      : [field("description", "Change", object.description, true), field("reason", "Why", "", true)];
  const status = h("div");
  const form = h("form", { id: "revise-form", class: "revise-form", on: { submit: async (event) => {
    event.preventDefault();
    const revision = {};
    for (const [name, input, before] of inputs) {
      const value = /** @type {HTMLInputElement} */ (input).value.trim();
      if (value !== before.trim()) revision[name] = value;
    }
    if (Object.keys(revision).length === 0) {
      replace(status, h("p", { class: "muted" }, "Nothing changed."));
      return;
    }
    await submit(revision);
  } } }, parts, h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Save revision")), status);
  return form;
}

function sourceItem(source) {
  const context = h("div", { class: "source-context" });
  let shown = false;
  const toggle = h("button", { type: "button", "aria-expanded": "false", on: { click: async () => {
    shown = !shown;
    toggle.setAttribute("aria-expanded", String(shown));
    if (!shown) {
      replace(context);
      return;
    }
    replace(context, h("p", { class: "muted" }, "Loading…"));
    try {
      const around = await get(`/source-context/${sourcePath(source.source_type, source.source_id)}?before=1&after=1`);
      replace(context, h("ol", { class: "plain context-list" },
        [...around.before, around.focus, ...around.after].map((item) => h("li", { class: item === around.focus ? "focus" : null },
          h("div", { class: "muted small-text" }, item.title, " · ", timeEl(item.occurred_at)),
          h("pre", null, clip(item.text, 800))))));
    } catch (error) {
      replace(context, errorBox(error));
    }
  } } }, "Show context");
  return h("li", { class: `card source${source.exists ? "" : " deleted"}` },
    h("div", { class: "row spread" },
      h("span", null, h("strong", null, source.title || source.source_type), " · ", timeEl(source.occurred_at)),
      source.exists && toggle),
    source.exists
      ? [
          h("pre", { class: "excerpt" }, source.excerpt),
          source.conversation_id && h("a", {
            class: "small-text",
            href: `#/conversations/${encodeURIComponent(source.conversation_id)}?source=${encodeURIComponent(source.source_id)}`,
          }, `In “${source.conversation_title ?? source.conversation_id}”`),
          context,
        ]
      : h("p", { class: "muted" }, "This source was deleted since the review."));
}

function clip(text, length) {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}
