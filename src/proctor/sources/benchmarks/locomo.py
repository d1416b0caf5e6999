"""LoCoMo long-term conversational-memory dialogues as conversations.

Shape: a JSON list of samples (a single sample object is accepted too)::

    {sample_id, conversation: {speaker_a, speaker_b,
                               session_<N>: [{speaker, dia_id: "D<N>:<i>", text,
                                              img_url?, blip_caption?, query?}],
                               session_<N>_date_time: "1:56 pm on 8 May, 2023"},
     qa: [{question, answer, evidence: ["D1:3"], category}],
     event_summary, observation, session_summary}

One sample is one conversation ``locomo:<sample_id>``, one turn is one message
``locomo:<sample_id>:<dia_id>``, so the QA items' gold evidence ids map straight onto
source ids. Both speakers are people in the dialogue, so every turn is a ``user``
prompt with the speaker as author. Sessions are not tasks (no goal, no outcome): each
message records its session number, and the conversation lists the sessions with their
dates in ``attributes["sessions"]``. A session's date becomes the ``created_at`` of all
its turns (the dataset gives no time per turn, and none is invented); the dates carry no
time zone and are read as UTC. Image turns keep their caption as ``[image: …]``.

The QA list, event summaries and model-written observations are evaluation material,
not dialogue: they stay out of the bundle, and evaluation reads them from the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from proctor.sources._files import RecordLines
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.benchmarks._common import (
    RECORD_ERRORS,
    RecordError,
    UniqueIds,
    any_of,
    check_nesting,
    content_key,
    load_document,
    record_issue,
    require,
    short_repr,
    text_of,
)
from proctor.transcript import Conversation, ConversationBundle, Message

_SESSION = re.compile(r"^session_(\d+)$")
_DATE = re.compile(
    r"^\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>am|pm)\s+on\s+"
    r"(?P<day>\d{1,2})\s+(?P<month>[A-Za-z]+)\.?,?\s+(?P<year>\d{4})\s*$",
    re.IGNORECASE,
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}


def parse_session_date(text: str) -> datetime | None:
    """A LoCoMo session date such as ``"1:56 pm on 8 May, 2023"`` as aware UTC, else None."""
    match = _DATE.match(text)
    if match is None:
        return None
    month = _MONTHS.get(match["month"].lower())
    hour = int(match["hour"]) % 12 + (12 if match["half"].lower() == "pm" else 0)
    if month is None:
        return None
    try:
        return datetime(
            int(match["year"]), month, int(match["day"]), hour, int(match["minute"]), tzinfo=UTC
        )
    except ValueError:
        return None


def _is_sample(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("conversation"), Mapping)
        and "speaker_a" in value["conversation"]
    )


class LocomoAdapter(SourceAdapter):
    """LoCoMo samples: one conversation per sample, one message per dialogue turn."""

    name = "locomo"
    description = "LoCoMo long multi-session dialogues (list of samples with sessions)."

    def sniff(self, sample: Sample) -> bool:
        """A sample (or list of samples) whose ``conversation`` names ``speaker_a``."""
        if sample.text_start not in ("[", "{") or sample.is_jsonl:
            return False
        document = sample.document
        if isinstance(document, list):
            return any_of(document, _is_sample)
        return _is_sample(document)

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield one bundle per sample; a bad sample or date becomes an issue."""
        document, issue = load_document(unit)
        if issue is not None:
            yield issue
            return
        path = unit.path
        samples = document if isinstance(document, list) else [document]
        ids = UniqueIds()
        lines = RecordLines(path)
        for number, sample in enumerate(samples):
            where = f"sample {number}"
            line = lines.of(number) if isinstance(document, list) else None
            try:
                if not isinstance(sample, Mapping):
                    raise RecordError("not a JSON object")
                where = f"sample {number} ({short_repr(sample.get('sample_id'))})"
                check_nesting(sample)
                bundle, warnings = self._bundle(sample, ids, str(path))
            except RECORD_ERRORS as exc:
                yield record_issue(path, where, f"{exc}; sample skipped", line=line)
                continue
            for warning in warnings:
                yield record_issue(path, where, warning, line=line, severity="warning")
            yield bundle

    def _bundle(
        self, sample: Mapping[str, Any], ids: UniqueIds, origin: str
    ) -> tuple[ConversationBundle, list[str]]:
        dialogue = require(sample, "conversation", Mapping)
        sample_id = sample.get("sample_id")
        key = sample_id if isinstance(sample_id, str) and sample_id else content_key(dialogue)
        conversation_id, repeated = ids.claim(f"locomo:{key}", sample)
        warnings = [repeated] if repeated else []
        numbers = sorted(int(m[1]) for k in dialogue if (m := _SESSION.match(str(k))))
        messages: list[Message] = []
        sessions: list[dict[str, Any]] = []
        for number in numbers:
            turns = dialogue[f"session_{number}"]
            if not isinstance(turns, list):
                raise RecordError(f"session_{number} must be a list of turns")
            raw_date = dialogue.get(f"session_{number}_date_time")
            when = parse_session_date(raw_date) if isinstance(raw_date, str) else None
            if when is None:
                warnings.append(f"session_{number} has no readable date ({raw_date!r})")
            before = len(messages)
            for index, turn in enumerate(turns):
                message = self._message(turn, conversation_id, number, index, when, warnings)
                if message is not None:
                    messages.append(message)
            sessions.append(
                {
                    "session": number,
                    "date_time": raw_date,
                    "started_at": when.isoformat() if when else None,
                    "turns": len(messages) - before,
                }
            )
        dates = [m.created_at for m in messages if m.created_at is not None]
        speakers = [dialogue.get("speaker_a"), dialogue.get("speaker_b")]
        qa = sample.get("qa")
        conversation = Conversation(
            conversation_id=conversation_id,
            format=self.name,
            external_id=key,
            title=" & ".join(str(s) for s in speakers if s) or key,
            project_hint="locomo",
            started_at=min(dates) if dates else None,
            ended_at=max(dates) if dates else None,
            attributes={
                "speakers": [s for s in speakers if s],
                "sessions": sessions,
                "qa_items": len(qa) if isinstance(qa, list) else 0,
            },
        )
        bundle = ConversationBundle(conversation, tuple(messages), origin=origin)
        return bundle, warnings

    @staticmethod
    def _message(
        turn: Any,
        conversation_id: str,
        session: int,
        index: int,
        when: datetime | None,
        warnings: list[str],
    ) -> Message | None:
        if not isinstance(turn, Mapping):
            warnings.append(f"session_{session}[{index}] is not an object; skipped")
            return None
        dia_id = turn.get("dia_id")
        if not isinstance(dia_id, str) or not dia_id:
            # Gold evidence cites dia_ids, so a turn without one cannot be cited anyway;
            # it still gets an id that cannot collide with a ``D<n>:<i>`` one.
            warnings.append(f"session_{session}[{index}] has no dia_id; named by position")
            dia_id = f"S{session}:{index + 1}"
        text = text_of(turn.get("text"))
        caption = turn.get("blip_caption")
        attributes: dict[str, Any] = {"session": session}
        if isinstance(caption, str) and caption.strip():
            text = f"{text}\n[image: {caption.strip()}]" if text.strip() else f"[image: {caption}]"
            if turn.get("img_url"):
                attributes["img_url"] = turn["img_url"]
            if isinstance(turn.get("query"), str):
                attributes["image_query"] = turn["query"]
        speaker = turn.get("speaker")
        return Message(
            source_id=f"{conversation_id}:{dia_id}",
            role="user",
            kind="prompt",
            text=text,
            created_at=when,
            author=str(speaker) if speaker else None,
            attributes=attributes,
        )
