"""A maintenance run's answer: the model's, read strictly, or the deterministic path's.

The model must answer exactly ``{"action": "none", "reason"}`` or ``{"action":
"replace", "reason", "content"}``; anything else is an ``AnswerError`` and nothing is
written.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexer.index.abstract import one_line
from shared.errors import InvalidFrontmatterError
from shared.frontmatter import parse_frontmatter
from shared.graphemes import cut_chars
from shared.model_output import parse_json_object

MAX_REASON_CHARS = 500


@dataclass(frozen=True)
class Answer:
    action: str
    reason: str
    content: str | None = None
    mark: str | None = None  # the newest event entry the deterministic path took


class AnswerError(ValueError):
    """The model's final answer is not one of the two allowed JSON objects."""


def parse_answer(text: str) -> Answer:
    """The model's final answer, strictly: ``none`` with a reason, or ``replace`` with a
    reason and the whole new file; ``AnswerError`` for anything else."""
    try:
        data = parse_json_object(text)
    except ValueError as err:
        raise AnswerError(str(err)) from None
    action = data.get("action")
    if action not in ("none", "replace"):
        raise AnswerError(f'"action" must be "none" or "replace", not {action!r}')
    expected = {"action", "reason"} | ({"content"} if action == "replace" else set())
    if set(data) != expected:
        raise AnswerError(
            f'a "{action}" answer has exactly the keys {sorted(expected)}, not {sorted(data)}'
        )
    reason = data["reason"]
    if not isinstance(reason, str) or not one_line(reason):
        raise AnswerError('"reason" must be a non-empty string')
    content = data.get("content")
    if action == "replace" and (not isinstance(content, str) or not content.strip()):
        raise AnswerError('"content" must be the whole new file, a non-empty string')
    if isinstance(content, str) and action == "replace" and not _has_text(content):
        raise AnswerError('"content" must be the whole new file: it has frontmatter and no text')
    reason = cut_chars(one_line(reason), MAX_REASON_CHARS)  # (a character as seen kept whole)
    return Answer(action, reason, content)  # data: no escapes


def _has_text(content: str) -> bool:
    """Whether a note has a body: a block of frontmatter alone would empty the file (a
    block that cannot be read is left to the write, which says what is wrong)."""
    try:
        return bool(parse_frontmatter(content)[1].strip())
    except InvalidFrontmatterError:
        return True
