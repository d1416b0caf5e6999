"""The knowledge-base endpoints (UI-5): list, read, preview → confirm, traversal refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import Api
from tests.backends import database_env
from tests.loopback import free_port
from tests.server_zygote import forked_serving


def _entity(api: Api, name: str) -> tuple[str, str]:
    result_id = api.get("/api/results").json()["results"][0]["result_id"]
    graph = api.get(f"/api/results/{result_id}/graph", params={"limit": 500}).json()
    entity_id = next(e["entity_id"] for e in graph["entities"] if e["name"] == name)
    return result_id, entity_id


def _preview(api: Api, **body: Any) -> dict[str, Any]:
    response = api.post("/api/knowledge/preview", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and not p.name.startswith("proctor.db")
    }


def test_a_note_is_previewed_confirmed_listed_and_read_over_http(
    api: Api, proctor_home: Path
) -> None:
    result_id, entity_id = _entity(api, "src/jobs/exportLedger.ts")

    preview = _preview(api, result=result_id[:8], entity=entity_id[:8])
    assert preview["mode"] == "create" and preview["entry"] == "src-jobs-exportledger-ts"
    assert "## Changes over time" in preview["text"]
    assert api.get("/api/knowledge").json()["entries"] == []

    confirmed = api.post(
        "/api/knowledge/confirm",
        json={"digest": preview["digest"], "entry": preview["entry"], "text": preview["text"]},
    )
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["mode"] == "create"
    path = proctor_home / "knowledge" / "src-jobs-exportledger-ts.md"
    assert confirmed.json()["path"] == str(path)
    assert path.read_text() == preview["text"]

    listing = api.get("/api/knowledge").json()
    assert [e["name"] for e in listing["entries"]] == ["src-jobs-exportledger-ts"]
    assert listing["bases"][0]["name"] == "local" and listing["bases"][0]["writable"]
    shown = api.get("/api/knowledge/src-jobs-exportledger-ts").json()
    assert shown["text"] == preview["text"] and shown["writable"]

    again = _preview(api, result=result_id, entity=entity_id)
    assert again["mode"] == "extend" and again["text"].startswith("## Update ")


def test_a_confirm_after_the_entry_changed_is_a_conflict_and_writes_nothing(
    api: Api, proctor_home: Path
) -> None:
    result_id, entity_id = _entity(api, "npm run db:migrate")
    preview = _preview(api, result=result_id, entity=entity_id, entry="Migrations")
    path = proctor_home / "knowledge" / "migrations.md"
    path.parent.mkdir(parents=True)
    path.write_text("Mine.\n")

    response = api.post(
        "/api/knowledge/confirm",
        json={"digest": preview["digest"], "entry": "migrations", "text": preview["text"]},
    )

    assert response.status_code == 409
    assert "preview again" in response.json()["detail"]
    assert path.read_text() == "Mine.\n"


def test_an_external_base_is_read_over_http_but_never_written(
    api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wiki = tmp_path / "wiki"
    (wiki / "team").mkdir(parents=True)
    (wiki / "team" / "ledger.md").write_text("Team note\n")
    monkeypatch.setenv("PROCTOR_KNOWLEDGE_EXTERNAL", f"wiki={wiki}")
    result_id, entity_id = _entity(api, "npm run db:migrate")

    listing = api.get("/api/knowledge", params={"base": "wiki"}).json()
    assert [e["name"] for e in listing["entries"]] == ["team/ledger"]
    assert not next(b for b in listing["bases"] if b["name"] == "wiki")["writable"]
    shown = api.get("/api/knowledge/team/ledger", params={"base": "wiki"})
    assert shown.status_code == 200 and shown.json()["text"] == "Team note\n"

    preview = api.post(
        "/api/knowledge/preview", json={"result": result_id, "entity": entity_id, "base": "wiki"}
    )
    confirm = api.post(
        "/api/knowledge/confirm",
        json={"digest": "0" * 64, "entry": "ledger", "text": "x", "base": "wiki"},
    )
    for response in (preview, confirm):
        assert response.status_code == 400
        assert "read-only" in response.json()["detail"]
    assert _tree(wiki) == {"team/ledger.md": b"Team note\n"}


READ_ATTEMPTS = [
    "..%2F..%2Fsecret",
    "..%2Fsecret.md",
    "%2E%2E/secret",
    "%2Fetc%2Fpasswd",
    "C:%5Csecret",
    "c:secret",
    "..%5C..%5Csecret",
    "secret%00.md",
    "notes%2F..%2F..%2Fsecret",
    "~%2Fsecret",
    ".hidden",
    "leak",
    "outside/secret",
]


@pytest.mark.parametrize("name", READ_ATTEMPTS)
def test_reading_outside_the_knowledge_base_is_refused(
    api: Api, proctor_home: Path, name: str
) -> None:
    root = proctor_home / "knowledge"
    root.mkdir(parents=True)
    secret = proctor_home / "secret.md"
    secret.write_text("do not read")
    (root / "leak.md").symlink_to(secret)
    (root / "outside").symlink_to(proctor_home, target_is_directory=True)

    response = api.get(f"/api/knowledge/{name}")

    assert response.status_code in {400, 404}, response.text
    assert "do not read" not in response.text


WRITE_ATTEMPTS = [
    "../secret",
    "../../etc/passwd",
    "/tmp/secret",
    "C:\\secret",
    "c:secret",
    "..\\secret",
    "notes/../../secret",
    "sub/entry",
    "secret\x00",
    "~/secret",
    ".bashrc",
    "leak",
    "NUL",
]


@pytest.mark.parametrize("entry", WRITE_ATTEMPTS)
def test_writing_outside_the_knowledge_base_is_refused_and_writes_nothing(
    api: Api, proctor_home: Path, entry: str
) -> None:
    root = proctor_home / "knowledge"
    root.mkdir(parents=True)
    secret = proctor_home / "secret.md"
    secret.write_text("keep")
    (root / "leak.md").symlink_to(secret)
    before = _tree(proctor_home)
    result_id, entity_id = _entity(api, "npm run db:migrate")

    preview = api.post(
        "/api/knowledge/preview", json={"result": result_id, "entity": entity_id, "entry": entry}
    )
    confirm = api.post(
        "/api/knowledge/confirm", json={"digest": "a" * 64, "entry": entry, "text": "pwned"}
    )

    assert preview.status_code == 400, preview.text
    assert confirm.status_code == 400, confirm.text
    assert "refused" in confirm.json()["detail"]
    assert _tree(proctor_home) == before


def test_bad_bodies_and_unknown_bases_and_entries_are_refused_precisely(api: Api) -> None:
    assert api.post("/api/knowledge/preview", json={"result": "x"}).status_code == 422
    assert api.post("/api/knowledge/confirm", json={"digest": "nothex"}).status_code == 422
    assert (
        api.post("/api/knowledge/preview", json={"result": "x", "entity": "y"}).status_code == 404
    )
    assert api.get("/api/knowledge", params={"base": "nowhere"}).status_code == 404
    assert api.get("/api/knowledge/missing-entry").status_code == 404


@pytest.mark.slow
def test_proctor_serve_previews_confirms_and_refuses_traversal_on_a_real_socket(
    database: Path,
) -> None:
    home = database.parent
    port = free_port()
    command = ["serve", "--port", str(port)]
    env = {
        "PROCTOR_HOME": str(home),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        "PATH": "",
        **database_env(home),
    }
    with (
        forked_serving(command, env, port),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as client,
    ):
        result_id = client.get("/api/results").json()["results"][0]["result_id"]
        graph = client.get(f"/api/results/{result_id}/graph", params={"limit": 500}).json()
        entity_id = next(e["entity_id"] for e in graph["entities"] if e["name"] == "pytest")
        body = {"result": result_id, "entity": entity_id}
        preview = client.post("/api/knowledge/preview", json=body).json()
        confirmed = client.post(
            "/api/knowledge/confirm",
            json={"digest": preview["digest"], "entry": preview["entry"], "text": preview["text"]},
        )
        escape = client.post(
            "/api/knowledge/confirm",
            json={"digest": preview["digest"], "entry": "../escape", "text": preview["text"]},
        )
        read = client.get("/api/knowledge/..%2F..%2Fproctor.db")
        draft = client.post(f"/api/results/{result_id}/continue", json={"draft": "Go on."})

    assert confirmed.status_code == 200, confirmed.text
    assert (home / "knowledge" / "pytest.md").read_text() == preview["text"]
    assert escape.status_code == 400 and not (home / "escape.md").exists()
    assert read.status_code == 400
    assert draft.status_code == 200
    assert Path(draft.json()["prompt_file"]).read_text() == "Go on.\n"
