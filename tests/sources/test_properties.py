"""Properties that must hold for any input (hypothesis)."""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources import ClaudeCodeAdapter, ReadUnit, Redactor, iter_jsonl, read_paths
from proctor.transcript import SourceIssue, normalise_text


@given(st.text())
def test_redacting_is_idempotent(text: str) -> None:
    once = Redactor().redact(text)
    again = Redactor()
    assert again.redact(once) == once
    assert again.total == 0


@given(st.text(), st.text(alphabet=" \t\n"))
def test_normalised_text_ignores_trailing_space_and_composition(text: str, tail: str) -> None:
    assert normalise_text(text + tail) == normalise_text(text)
    assert normalise_text(unicodedata.normalize("NFD", text)) == normalise_text(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=12))
def test_reading_arbitrary_lines_never_raises(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.jsonl"
        path.write_bytes(b"\n".join(lines))
        for item in iter_jsonl(path):
            assert isinstance(item, SourceIssue) or isinstance(item[1], dict)
        for result in read_paths([path]):
            assert result is not None


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["user", "assistant", "system", "progress", "summary"])},
            optional={
                "uuid": st.text(max_size=8),
                "parentUuid": st.one_of(st.none(), st.text(max_size=8)),
                "sessionId": st.just("s"),
                "message": st.one_of(
                    st.none(),
                    st.fixed_dictionaries(
                        {"role": st.sampled_from(["user", "assistant"])},
                        optional={
                            "content": st.one_of(
                                st.text(max_size=20),
                                st.lists(
                                    st.dictionaries(st.text(max_size=5), st.text(max_size=5)),
                                    max_size=3,
                                ),
                            ),
                            "id": st.text(max_size=4),
                        },
                    ),
                ),
                "timestamp": st.one_of(st.text(max_size=10), st.integers()),
            },
        ),
        min_size=1,
        max_size=10,
    )
)
def test_claude_code_shaped_records_never_crash_the_adapter(
    records: list[dict[str, object]],
) -> None:
    import json

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
        # Straight to the adapter: read_unit would turn a crash into an issue and hide it.
        for item in ClaudeCodeAdapter().read(ReadUnit(path)):
            assert item is not None
