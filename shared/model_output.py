"""Reading a model's answer as data: one JSON object, strictly, and nothing else.

The agent client's merge confirmation and the indexer's background jobs (summaries,
maintenance) all ask a chat model for exactly one JSON object. A model answer is data,
never instructions: whatever it says is parsed here and checked by its caller.
"""

from __future__ import annotations

import json
import re
from typing import Any

from shared.utf8 import texts_in, utf8_problem

_FENCED = re.compile(r"\A```(?:json)?\s*\n(.*)\n```\s*\Z", re.S)
MAX_ANSWER_CHARS = 1_000_000
ANSWER_SHOWN_CHARS = 60  # of an answer that is not JSON, in the error (the log, the state)
MAX_NUMBER_DIGITS = 4_300  # Python's own bound on an int read from text (sys.int_info)


def parse_json_object(text: object) -> dict[str, Any]:
    """The one JSON object ``text`` holds (a lone ```json fence around it is tolerated);
    ``ValueError`` saying what is wrong otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the answer is empty")
    if len(text) > MAX_ANSWER_CHARS:
        raise ValueError(f"the answer is longer than {MAX_ANSWER_CHARS} characters")
    text = text.strip()
    fenced = _FENCED.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        data = json.loads(text, parse_int=_integer)
    except json.JSONDecodeError as exc:
        # (its start, as one line: a model that answered prose says so at once)
        start = text[:ANSWER_SHOWN_CHARS] + ("…" if len(text) > ANSWER_SHOWN_CHARS else "")
        raise ValueError(f"the answer is not JSON ({exc.msg} at {exc.pos}): {start!r}") from None
    except RecursionError:
        raise ValueError("the answer nests too deep") from None
    if not isinstance(data, dict):
        raise ValueError(f"the answer is JSON but not an object ({type(data).__name__})")
    if any(utf8_problem(text) for text in texts_in(data)):
        raise ValueError("the answer holds a lone UTF-16 surrogate (no text can store it)")
    return data


def _integer(digits: str) -> int:
    """An integer of the answer; a longer one than Python reads is refused in words
    (``int`` said "use sys.set_int_max_str_digits()", to the log and the job's state)."""
    if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ValueError(f"the answer holds a number of {len(digits):,} digits")
    return int(digits)
