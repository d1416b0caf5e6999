// Continue a discussion from a result (SPEC UI-5): preview Proctor's draft (the whole
// result or one entity), edit it within 12,000 characters, then save it as a prompt file,
// copy it to the clipboard, or — where a model connection is configured — ask a question
// directly and read the model's answer beside the quoted facts it was given. Facts, names
// and excerpts are observed content: they go into text nodes only.

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
    this.asks = 0;
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
    const copy = h("button", { type: "button", id: "copy-draft", on: { click: () => this.copy(outcome) } }, "Copy draft");
    const outcome = h("div", { class: "continue-outcome", "aria-live": "polite" });
    const count = () => {
      const length = textarea.value.trim().length;
      const over = length > DRAFT_LIMIT;
      counter.textContent = `${length.toLocaleString()} / ${DRAFT_LIMIT.toLocaleString()} characters${over ? " — too long to save" : ""}`;
      counter.classList.toggle("over", over);
      save.toggleAttribute("disabled", over || length === 0);
      copy.toggleAttribute("disabled", length === 0);
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
      h("div", { class: "row" }, save, copy),
      outcome,
      this.askForm(draft.ask_model));
  }

  /** Copy the (edited) draft to the clipboard, saying whether it worked. */
  async copy(outcome) {
    if (!this.textarea) return;
    try {
      await navigator.clipboard.writeText(this.textarea.value);
    } catch (error) {
      // No clipboard permission (or no secure context): the text is selected for Ctrl+C.
      this.textarea.focus();
      this.textarea.select();
      replace(outcome, h("p", { class: "error-text", role: "alert" },
        `The browser did not allow copying (${error instanceof Error ? error.message : String(error)}); the draft is selected: press Ctrl+C (⌘C).`));
      return;
    }
    replace(outcome, h("p", { class: "copied" }, "Draft copied to the clipboard. Paste it into the agent's conversation."));
    toast("Draft copied.");
  }

  /** The "ask directly" form, or a line saying how to get it (no model connection). */
  askForm(model) {
    if (!model) {
      return h("p", { class: "muted small-text ask-none" },
        "To ask a question directly, add a model connection on the ", h("a", { href: "#/settings" }, "Settings"), " page.");
    }
    const question = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "continue-question", rows: "3", maxlength: "2000", "aria-describedby": "ask-model" }));
    const answer = h("div", { class: "ask-answer", id: "ask-answer", "aria-live": "polite" });
    const button = h("button", { type: "button", id: "ask-button", on: { click: () => this.ask(question, button, answer) } }, "Ask");
    return h("section", { class: "ask", "aria-labelledby": "ask-heading" },
      h("h3", { id: "ask-heading" }, "Ask directly"),
      h("p", { class: "muted small-text", id: "ask-model" }, `Your question and this result's facts (as quoted data) go to ${model}.`),
      h("label", { for: "continue-question" }, "Question"),
      question,
      h("div", { class: "row" }, button),
      answer);
  }

  async ask(question, button, answer) {
    const text = question.value.trim();
    if (!text) {
      replace(answer, h("p", { class: "error-text", role: "alert" }, "Write a question first."));
      question.focus();
      return;
    }
    button.setAttribute("disabled", "");
    replace(answer, h("p", { class: "muted" }, "Asking…"));
    const asked = ++this.asks;
    try {
      const reply = await post(`/results/${encodeURIComponent(this.resultId)}/ask`, { focus: this.focusBody(), question: text });
      if (asked === this.asks) replace(answer, answerView(reply));
    } catch (error) {
      if (asked === this.asks) replace(answer, errorBox(error));
    } finally {
      button.removeAttribute("disabled");
    }
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

/** The model's answer, then the quoted facts and sources it was given (cited ones marked). */
function answerView(reply) {
  const cited = new Set(reply.cited);
  const sources = new Map(reply.sources.map((source) => [source.ref, source]));
  const refList = (refs) => refs.length ? ` [${refs.join(", ")}]` : "";
  return h("div", { class: "ask-reply" },
    h("p", { class: "muted small-text" }, `${reply.model} answered (${reply.calls} call${reply.calls === 1 ? "" : "s"}):`),
    h("blockquote", { class: "model-answer" }, reply.answer),
    reply.cited.length ? h("p", { class: "small-text" }, `It rests on ${reply.cited.join(", ")}.`) : "",
    h("details", { class: "given-facts", open: true },
      h("summary", null, `The facts it was given (${reply.facts.length}${reply.left_out ? `, ${reply.left_out} left out` : ""})`),
      h("ol", { class: "plain given-list" }, reply.facts.map((fact) => h("li", { class: cited.has(fact.ref) ? "cited" : null, dataset: { ref: fact.ref } },
        h("strong", null, `${fact.ref} `), h("span", { class: "muted" }, `${fact.section}: `), fact.text, refList(fact.sources)))),
      reply.sources.length ? h("ol", { class: "plain given-list given-sources" }, [...sources.values()].map((source) => h("li", { class: cited.has(source.ref) ? "cited" : null, dataset: { ref: source.ref } },
        h("strong", null, `${source.ref} `),
        source.exists && source.conversation_id
          ? h("a", { href: `#/conversations/${encodeURIComponent(source.conversation_id)}?source=${encodeURIComponent(source.source_id)}` }, source.title || source.source_type)
          : h("span", { class: "muted" }, `${source.title || source.source_type}${source.exists ? "" : " (deleted since)"}`),
        source.excerpt ? h("span", { class: "muted" }, `: ${source.excerpt}`) : ""))) : ""));
}
