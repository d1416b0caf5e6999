// "Remember this" on a finding (SUP-10): drafts a memory candidate from the finding (its
// title and what it says), shows it for editing, and only "Confirm" makes it a memory the
// supervisor sees for this project's conversations (SUP-3); "Discard" drops the draft.

import { post } from "../api.js";
import { errorBox, h, replace, toast } from "../dom.js";

/**
 * The "Remember this" button of a finding card; the editor opens at the end of the card.
 * @param {{ finding_id: string, title: string }} finding
 * @returns {HTMLElement}
 */
export function rememberButton(finding) {
  const button = h("button", { type: "button", class: "remember", "aria-expanded": "false", on: { click: async () => {
    const card = button.closest("article") ?? button.parentElement;
    if (!card) return;
    card.querySelector(":scope > .memory-editor")?.remove();
    try {
      const candidate = await post(`/findings/${encodeURIComponent(finding.finding_id)}/remember`);
      const editor = memoryEditor(candidate, () => {
        editor.remove();
        button.setAttribute("aria-expanded", "false");
        button.focus();
      });
      card.appendChild(editor);
      button.setAttribute("aria-expanded", "true");
      /** @type {HTMLElement | null} */ (editor.querySelector("textarea"))?.focus();
    } catch (error) {
      card.appendChild(errorBox(error));
    }
  } } }, "Remember this");
  return button;
}

function memoryEditor(candidate, close) {
  const id = `memory-${candidate.candidate_id}`;
  const text = h("textarea", { id, rows: "3", maxlength: "2000" }, candidate.text);
  const status = h("p", { class: "muted", role: "status" });
  const decide = async (action) => {
    try {
      const body = action === "confirm" ? { text: /** @type {HTMLTextAreaElement} */ (text).value } : undefined;
      const decided = await post(`/memories/${encodeURIComponent(candidate.candidate_id)}/${action}`, body);
      toast(decided.status === "confirmed" ? "Remembered: the supervisor will see this for this project." : "Memory draft discarded.");
      close();
    } catch (error) {
      replace(status, errorBox(error));
    }
  };
  return h("form", { class: "memory-editor", "aria-label": "Memory draft", on: { submit: (event) => { event.preventDefault(); decide("confirm"); } } },
    h("label", { for: id }, "Remember for this project (the supervisor sees it once you confirm):"),
    text,
    h("div", { class: "row", role: "group", "aria-label": "Memory decision" },
      h("button", { type: "submit" }, "Confirm memory"),
      h("button", { type: "button", on: { click: () => decide("discard") } }, "Discard")),
    status);
}
