"""A maintenance run's answer: the model's, read strictly, or the deterministic path's.

The model must answer exactly ``{"action": "none", "reason"}`` or ``{"action":
"replace", "reason", "content"}``; anything else is an ``AnswerError`` and nothing is
written. Its reason is data too: a credential in it is redacted, as in the file.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexer.index.abstract import one_line
from indexer.jobs.secrets import redact_secrets
from shared.errors import InvalidFrontmatterError
from shared.frontmatter import parse_frontmatter
from shared.graphemes import cut_chars
from shared.model_output import parse_json_object
from shared.models import shows_something

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
        raise AnswerError(
            '"content" must be the whole new file: it has no text (frontmatter or invisible'
            " characters only)"
        )
    # A credential the model quoted from an event is redacted as in the file (the reason
    # goes to the log, the state file and `indexer maintain`'s output); the cut keeps a
    # character as seen whole.
    reason = cut_chars(one_line(redact_secrets(reason)[0]), MAX_REASON_CHARS)
    return Answer(action, reason, content)  # data: no escapes


def _has_text(content: str) -> bool:
    """Whether a note has a body that shows: a block of frontmatter alone, or zero-width
    characters, would empty the file (a block that cannot be read is left to the write,
    which says what is wrong)."""
    try:
        return shows_something(parse_frontmatter(content)[1])
    except InvalidFrontmatterError:
        return True
