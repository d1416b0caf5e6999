// Continue a discussion from a result (SPEC UI-5): preview Proctor's draft (the whole
// result or one entity), edit it within 12,000 characters, save it as a prompt file.

import { post } from "../api.js";
import { errorBox, h, replace, toast } from "../dom.js";

export const DRAFT_LIMIT = 12_000;

export class ContinueCard {
  /** @param {HTMLElement} container @param {string} resultId */
  constructor(container, resultId) {
    this.container = container;
    this.resultId = resultId;
    /** @type {null | { entity_id: string, name: string }} */
    this.entity = null;
    this.baseline = null;
    this.saved = true;
    this.textarea = null;
    this.previews = 0;
    this.render();
  }

  /** True while an edited draft has not been saved. */
  isDirty() {
    return !!this.textarea && !this.saved && this.textarea.value !== this.baseline;
  }

  /** Focus the card on an entity (null: the whole result) and show its draft. */
  async focusOn(entity) {
    if (this.isDirty() && !window.confirm("Discard your edited draft?")) return;
    this.entity = entity;
    await this.preview();
    this.container.scrollIntoView({ block: "nearest" });
  }

  focusLabel() {
    return this.entity ? `the entity “${this.entity.name}”` : "the whole result";
  }

  render() {
    this.textarea = null;
    this.saved = true;
    replace(this.container,
      h("h2", null, "Continue the discussion"),
      h("p", { class: "muted" }, "Proctor drafts a bounded, quoted context from this result for you to edit; saving writes a ready-to-paste prompt file."),
      h("p", null, "About ", h("strong", null, this.focusLabel()), "."),
      h("div", { class: "row" },
        h("button", { type: "button", class: "primary", on: { click: () => this.preview() } }, "Prepare draft"),
        this.entity && h("button", { type: "button", on: { click: () => this.focusOn(null) } }, "Use the whole result")));
  }

  focusBody() {
    return this.entity ? { entity: this.entity.entity_id } : {};
  }

  async preview() {
    this.render();
    const status = h("p", { class: "muted" }, "Preparing the draft…");
    this.container.appendChild(status);
    // Only the newest preview asked for may show (a second click, another entity).
    const asked = ++this.previews;
    let draft;
    try {
      draft = await post(`/results/${encodeURIComponent(this.resultId)}/continue`, { focus: this.focusBody() });
    } catch (error) {
      if (asked === this.previews) status.replaceWith(errorBox(error));
      return;
    }
    if (asked !== this.previews) return;
    status.remove();
    this.showDraft(draft);
  }

  showDraft(draft) {
    const textarea = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "continue-draft", rows: "14", spellcheck: "false", "aria-describedby": "draft-count" }));
    textarea.value = draft.draft;
    this.textarea = textarea;
    this.baseline = draft.draft;
    this.saved = false;
    const counter = h("p", { id: "draft-count", class: "counter", "aria-live": "polite" });
    const save = h("button", { type: "button", class: "primary", on: { click: () => this.save(save, outcome) } }, "Save prompt file");
    const outcome = h("div", { class: "continue-outcome", "aria-live": "polite" });
    const count = () => {
      const length = textarea.value.trim().length;
      const over = length > DRAFT_LIMIT;
      counter.textContent = `${length.toLocaleString()} / ${DRAFT_LIMIT.toLocaleString()} characters${over ? " — too long to save" : ""}`;
      counter.classList.toggle("over", over);
      save.toggleAttribute("disabled", over || length === 0);
    };
    textarea.addEventListener("input", () => {
      this.saved = false;
      count();
    });
    count();
    const leftOut = draft.left_out.filter((part) => part.left_out > 0);
    this.container.append(
      h("p", { class: "muted small-text" },
        `${draft.sources.length} sources cited`,
        draft.trimmed && leftOut.length
          ? ` · left out to stay within the limit: ${leftOut.map((part) => `${part.left_out} of ${part.total} ${part.part}`).join(", ")}`
          : ""),
      h("label", { for: "continue-draft" }, "Draft"),
      textarea,
      counter,
      h("div", { class: "row" }, save),
      outcome);
  }

  async save(button, outcome) {
    if (!this.textarea) return;
    button.setAttribute("disabled", "");
    try {
      const written = await post(`/results/${encodeURIComponent(this.resultId)}/continue`, { focus: this.focusBody(), draft: this.textarea.value });
      this.saved = true;
      this.baseline = this.textarea.value;
      replace(outcome, h("p", { class: "prompt-file" }, "Prompt file written: ", h("code", null, written.prompt_file),
        ". Paste it into the agent's conversation."));
      toast("Prompt file written.");
    } catch (error) {
      replace(outcome, errorBox(error));
    } finally {
      button.removeAttribute("disabled");
    }
  }
}
