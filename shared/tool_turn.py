"""What one model reply's tool calls add to a chat loop's conversation: bounded.

Both sides' tool loops run at most a few calls of one reply. They used to copy every call
the model named into the conversation anyway (its ``tool_calls`` entry and a "not run"
tool message each), which is sent again, and processed again, at every later turn: a
reply of 40,000 calls (3 MB, under the reply bound) made the run's CPU and memory grow
with the square of the turns. Only the calls that are run are kept; the OpenAI shape
holds (every kept id gets its tool message), and one short note, appended to the last
of them, tells the model about the rest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One function call of a reply as the loops run it. A model (or the server in
    front of it) may send a call with no function, a name that is not text, or its
    arguments as a JSON object rather than the JSON text OpenAI specifies: the object is
    taken as the arguments (what the model meant), anything else is a ``problem``,
    which the loops answer or fail on instead of running the call."""

    id: str
    name: str
    arguments: str  # JSON text; "" for none
    problem: str | None = None


@dataclass(frozen=True)
class ToolTurn:
    """The assistant message to keep, the calls to run (in its order), and how many of
    the reply's function calls were left out."""

    message: dict[str, Any]
    calls: list[ToolCall]
    dropped: int


class MalformedReply(ValueError):
    """A chat completion whose first choice's message cannot be read."""


def reply_message(response: Any) -> Any:
    """The first choice's message of a chat completion, checked: the SDK builds its
    objects without validating them, so a malformed body (a null message, a string for
    a choice, a tool call without a function) failed later with a Python error of its
    own, outside what the loops fall back on; a body that is not JSON (an HTML page, an
    event stream) is handed over as its text, which read as "no choices".
    ``MalformedReply`` says what is wrong."""
    if isinstance(response, str):  # (the SDK's answer to a body that is not JSON)
        raise MalformedReply(
            f"the model endpoint's reply is not JSON but text of {len(response):,}"
            f" characters, beginning {response[:60]!r}"
        )
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise MalformedReply("the model answered with no choices")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if message is None or not (content is None or isinstance(content, str)):
        raise MalformedReply("the model's answer holds no message")
    calls = getattr(message, "tool_calls", None)
    if calls is not None and not isinstance(calls, list):
        raise MalformedReply("the model's tool calls are not a list")
    for call in calls or []:  # (arguments of any shape are the loop's: ``tool_turn``)
        function = getattr(call, "function", None)
        if getattr(call, "type", None) == "function" and not isinstance(
            getattr(function, "name", None), str
        ):
            raise MalformedReply("the model made a tool call without a function name")
    return message


def tool_turn(content: str | None, calls: Sequence[Any], limit: int) -> ToolTurn:
    """The first ``limit`` function calls of a reply (SDK objects) and the assistant
    message that holds only them; calls of other types are ignored, as before. Its
    text keeps no lone surrogate (``\\ud800`` in the reply's JSON): the conversation
    is sent again, and such a text cannot be."""
    content = sendable(content) if content else content
    functions = [call for call in calls if getattr(call, "type", None) == "function"]
    kept = [read_call(call, number) for number, call in enumerate(functions[:limit])]
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in kept
        ],
    }
    return ToolTurn(message, kept, len(functions) - len(kept))


def read_call(call: Any, number: int) -> ToolCall:
    """The ``number``-th function call of a reply, whatever its shape (an id of ours
    when it has none: its answer must name one)."""
    call_id = getattr(call, "id", None)
    if not isinstance(call_id, str) or not call_id:
        call_id = f"unnamed_call_{number}"
    function = getattr(call, "function", None)
    call_id = sendable(call_id)
    name = getattr(function, "name", None)
    if not isinstance(name, str):
        return ToolCall(call_id, "", "", "the call names no function (a name as text)")
    if sendable(name) != name:
        return ToolCall(call_id, sendable(name), "", "the function's name is not valid text")
    arguments = getattr(function, "arguments", None)
    if isinstance(arguments, str) and sendable(arguments) != arguments:
        problem = f"the arguments of {name!r} are not valid text (a lone surrogate)"
        return ToolCall(call_id, name, "", problem)
    if arguments is None or isinstance(arguments, str):
        return ToolCall(call_id, name, arguments or "")
    if isinstance(arguments, dict):
        try:
            text = json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            pass  # not plain JSON data after all
        else:
            if sendable(text) == text:
                return ToolCall(call_id, name, text)
    problem = f"the arguments of {name!r} must be a JSON object, sent as JSON text"
    return ToolCall(call_id, name, "", problem)


def with_note(result: str, dropped: int, limit: int) -> str:
    """The last kept call's result, followed by the note on the calls left out."""
    if dropped <= 0:
        return result
    return (
        f"{result}\n\n[not run: {dropped} more tool calls of this reply; at most {limit}"
        " are run a turn, the rest are dropped. Ask again for what you still need.]"
    )


def sendable(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (UTF-8 cannot carry one)."""
    if text.isascii():
        return text
    return _SURROGATES.sub("\ufffd", text)


_SURROGATES = re.compile("[\ud800-\udfff]")  # (a str from JSON holds no pair: only lone ones)
