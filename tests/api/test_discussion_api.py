"""``POST /api/results/{ref}/continue`` (UI-5): preview a draft, hand an edited one on."""

from __future__ import annotations

from pathlib import Path

from tests.api.conftest import Api


def _result(api: Api) -> str:
    result_id: str = api.get("/api/results").json()["results"][0]["result_id"]
    return result_id


def test_a_preview_returns_the_bounded_draft_its_sources_and_what_it_left_out(
    api: Api, proctor_home: Path
) -> None:
    result_id = _result(api)

    response = api.post(f"/api/results/{result_id[:8]}/continue", json={})

    assert response.status_code == 200, response.text
    data = response.json()
    assert data["result_id"] == result_id and data["focus"] == "the whole result"
    assert data["chars"] == len(data["draft"]) <= 12_000
    assert "<<<PROCTOR-CONTEXT " in data["draft"]
    assert data["trimmed"] and any(x["part"] == "events" for x in data["left_out"])
    assert data["sources"][0]["label"] == "S1"
    assert all(f"[{s['label']}] {s['source_type']}" in data["draft"] for s in data["sources"])
    assert data["prompt_file"] is None
    assert not (proctor_home / "prompts").exists()


def test_an_edited_draft_is_written_as_a_prompt_file(api: Api, proctor_home: Path) -> None:
    result_id = _result(api)
    graph = api.get(f"/api/results/{result_id}/graph").json()
    entity_id = next(e["entity_id"] for e in graph["entities"] if e["name"] == "npm run db:migrate")
    preview = api.post(
        f"/api/results/{result_id}/continue", json={"focus": {"entity": entity_id}}
    ).json()
    edited = preview["draft"] + "Why does the migration need a running database?\n"

    response = api.post(
        f"/api/results/{result_id}/continue",
        json={"focus": {"entity": entity_id}, "draft": edited},
    )

    assert response.status_code == 200, response.text
    data = response.json()
    assert data["draft"] == edited.strip()
    path = Path(data["prompt_file"])
    assert path.parent == proctor_home / "prompts"
    assert path.read_text() == edited.strip() + "\n"
    assert data["focus"] == f"entity {entity_id[:12]}"


def test_a_draft_over_the_limit_an_unknown_focus_or_result_is_refused(
    api: Api, proctor_home: Path
) -> None:
    result_id = _result(api)
    url = f"/api/results/{result_id}/continue"

    too_long = api.post(url, json={"draft": "x" * 12_001})
    assert too_long.status_code == 400 and "12,000" in too_long.json()["detail"]
    assert api.post(url, json={"draft": "   "}).status_code == 400
    assert api.post(url, json={"focus": {"entity": "no-such"}}).status_code == 404
    assert api.post(url, json={"focus": {"story_line": "no-such"}}).status_code == 404
    both = api.post(url, json={"focus": {"entity": "a", "open_item": "b"}})
    assert both.status_code == 400
    assert api.post(url, json={"focus": {"planet": "x"}}).status_code == 422
    assert api.post("/api/results/no-such-result/continue", json={}).status_code == 404
    assert not (proctor_home / "prompts").exists()
