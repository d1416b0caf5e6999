// Markdown from observed content, rendered safely: markdown-it (served from /ui/vendor,
// a classic script exposing window.markdownit, loaded by this module: the pages that render
// Markdown import it and wait for it, the others never fetch it) parses with raw HTML off, and the DOM is built here from its tokens through h() — never from HTML text.
// Links keep only http(s) and mailto targets; images become links; headings become styled
// paragraphs (a transcript's "# Title" must not break the page's outline). Without the
// vendor file, text shows as it is.

import { h, scrollable } from "./dom.js";

const MARKDOWN_IT = "/ui/vendor/markdown-it.min.js";

/**
 * Load markdown-it once (a script element: the file is a classic script). Settles either
 * way: without it, text shows as it is.
 * @returns {Promise<void>}
 */
function loadMarkdownIt() {
  if (typeof (/** @type {any} */ (window).markdownit) === "function") return Promise.resolve();
  return new Promise((resolve) => {
    document.head.append(h("script", { src: MARKDOWN_IT, on: {
      load: () => resolve(),
      error: () => {
        console.error(`${MARKDOWN_IT} failed to load: Markdown shows as plain text`);
        resolve();
      },
    } }));
  });
}

// The modules importing this one (the trace, a sub-agent's card) wait until markdown-it is
// in, so what they render is Markdown from the first paint, as when the shell loaded it.
await loadMarkdownIt();

/** @type {any} */
let parser = null;

function markdownIt() {
  if (parser) return parser;
  const factory = /** @type {any} */ (window).markdownit;
  if (typeof factory !== "function") return null;
  parser = factory({ html: false, linkify: true, typographer: false });
  return parser;
}

/** True when markdown-it is loaded (tests and the fallback ask). */
export function markdownAvailable() {
  return markdownIt() !== null;
}

const SAFE_LINK = /^(https?:|mailto:)/i;

/** A link target shown as a link only when it is http(s) or mailto. */
export function safeHref(href) {
  const value = String(href ?? "").trim();
  return SAFE_LINK.test(value) ? value : null;
}

const BLOCK_TAGS = new Set(["p", "ul", "ol", "li", "blockquote", "table", "thead", "tbody", "tr", "th", "td", "hr", "dl", "dt", "dd"]);
const INLINE_TAGS = new Set(["em", "strong", "s", "sub", "sup"]);

/**
 * Render Markdown text as DOM nodes inside a new <div class="md">.
 * @param {string} text
 * @returns {HTMLElement}
 */
export function renderMarkdown(text) {
  const md = markdownIt();
  if (!md) return h("div", { class: "md plain-text" }, text);
  let tokens;
  try {
    tokens = md.parse(text, {});
  } catch {
    return h("div", { class: "md plain-text" }, text);
  }
  const root = h("div", { class: "md" });
  buildBlocks(tokens, root);
  return root;
}

function buildBlocks(tokens, root) {
  /** @type {HTMLElement[]} */
  const stack = [root];
  const top = () => stack[stack.length - 1];
  for (const token of tokens) {
    if (token.type === "inline") {
      buildInline(token.children ?? [], top());
    } else if (token.type === "fence" || token.type === "code_block") {
      const language = String(token.info ?? "").trim().split(/\s+/)[0];
      top().appendChild(scrollable(h("pre", { class: "md-code" },
        h("code", { class: language ? `language-${language.replace(/[^\w-]/g, "")}` : null }, token.content)),
        language ? `Code (${language.slice(0, 40)})` : "Code"));
    } else if (token.type === "html_block") {
      top().appendChild(h("p", null, token.content));
    } else if (token.type === "heading_open") {
      stack.push(appendTo(top(), h("p", { class: `md-h md-${token.tag}` })));
    } else if (token.type === "table_open") {
      const table = h("table");
      appendTo(top(), h("div", { class: "table-wrap", tabindex: "0" }, table));
      stack.push(table);
    } else if (token.nesting === 1 && BLOCK_TAGS.has(token.tag)) {
      const props = {};
      if (token.tag === "ol" && token.attrGet("start")) props.start = token.attrGet("start");
      const align = token.attrGet?.("style")?.match(/text-align:(left|right|center)/)?.[1];
      if (align) props.class = `align-${align}`;
      stack.push(appendTo(top(), h(token.tag, props)));
    } else if (token.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (token.type === "hr") {
      top().appendChild(h("hr"));
    }
  }
}

function appendTo(parent, child) {
  parent.appendChild(child);
  return child;
}

function buildInline(children, parent) {
  /** @type {HTMLElement[]} */
  const stack = [parent];
  const top = () => stack[stack.length - 1];
  for (const token of children) {
    switch (token.type) {
      case "text":
      case "html_inline":
        top().appendChild(document.createTextNode(token.content));
        break;
      case "code_inline":
        top().appendChild(h("code", null, token.content));
        break;
      case "softbreak":
        top().appendChild(document.createTextNode("\n"));
        break;
      case "hardbreak":
        top().appendChild(h("br"));
        break;
      case "image": {
        const alt = token.content || token.attrGet("alt") || "image";
        const href = safeHref(token.attrGet("src"));
        top().appendChild(href
          ? h("a", { href, rel: "noopener noreferrer", target: "_blank", class: "md-image" }, `[image: ${alt}]`)
          : document.createTextNode(`[image: ${alt}]`));
        break;
      }
      case "link_open": {
        const href = safeHref(token.attrGet("href"));
        const link = href
          ? h("a", { href, rel: "noopener noreferrer", target: "_blank" })
          : h("span", { class: "md-unsafe-link", title: "Link target not shown: only http(s) and mailto links are followed" });
        stack.push(appendTo(top(), link));
        break;
      }
      default:
        if (token.nesting === 1 && INLINE_TAGS.has(token.tag)) stack.push(appendTo(top(), h(token.tag)));
        else if (token.nesting === -1 && stack.length > 1) stack.pop();
        else if (token.content) top().appendChild(document.createTextNode(token.content));
    }
  }
}
