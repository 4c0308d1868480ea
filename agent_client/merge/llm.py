"""Knowledge entries merged by an LLM: a bounded chat-completions tool loop over MCP.

The system prompt is built from ``mem_entry_spec``, ``envelope_spec`` and ``vault_spec``
served by the indexer; the user message is the envelope (the entry as JSON). The loop
is bounded by steps, tokens and wall time, and must end with the JSON confirmation
``{updated_files, update_summary}``. A failure of the model or its endpoint raises
``MergeFailed``, a prompt the server does not serve ``NotFoundError``; the caller undoes
the writes through the journal. ``IndexerOfflineError`` passes through.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from typing import Any

import openai
from openai import AsyncOpenAI, DefaultAsyncHttpxClient
from openai.types.chat import ChatCompletion

from agent_client.failures import describe_failure, keep_secret
from agent_client.merge.confirmation import Confirmation, parse_confirmation
from agent_client.merge.coverage import MIN_ADDED, merged_share
from agent_client.merge.quiet import Pacer, quiet_of
from agent_client.merge.tools import MergeFailed, ToolExecutor, tool_schemas
from agent_client.settings import LLMSettings
from agent_client.vault import PROMPT_NAMES, Vault
from shared.model_endpoint import base_url
from shared.models import MemoryEntry
from shared.reply_bound import REQUEST_HEADERS, ReplyTooLarge, bound_reply, too_large
from shared.tool_turn import MalformedReply, reply_message, sendable, tool_turn, with_note

logger = logging.getLogger("agent_client.merge.llm")

MAX_COMPLETION_TOKENS = 4096
MAX_CALLS_PER_TURN = 16  # tool calls run of one reply; the rest are left out (a note)
BASE_TOOLS = ["read", "find", "grep", "stat", "write"]


def make_llm(settings: LLMSettings) -> AsyncOpenAI:
    """The OpenAI SDK client for ``settings`` (no retries of its own: a ``Retry-After``
    is kept across entries by ``merge.quiet``, and the fallback is the retry; a reply is
    read only so far: ``shared.reply_bound``); its key is kept out of the failures told."""
    keep_secret(settings.api_key)
    return AsyncOpenAI(
        base_url=base_url(settings.base_url),
        api_key=settings.api_key,
        timeout=settings.request_timeout,
        max_retries=0,
        http_client=DefaultAsyncHttpxClient(
            headers=REQUEST_HEADERS, event_hooks={"response": [bound_reply]}
        ),
    )


async def system_prompt(vault: Vault) -> str:
    """The writer's instructions, loaded from the indexer (cached per session)."""
    parts = [await vault.session.prompt_text(name) for name in PROMPT_NAMES]
    return "\n\n".join(p.strip() for p in parts)


def envelope(
    entry: MemoryEntry, search_available: bool, images: dict[str, str], suggested_path: str
) -> str:
    """The user message: the entry as JSON, where a new note would go, and the Markdown
    that embeds each image (already copied next to that note) keyed by asset name."""
    return json.dumps(
        {
            "task": "merge_knowledge",
            "entry": {
                "id": entry.id,
                "lang": entry.lang,
                "kind": entry.kind,
                "title": entry.title,
                "content": entry.content,
                "tags": list(entry.tags),
                "timestamp": entry.timestamp.isoformat(),
                "images": list(images),
            },
            "suggested_path": suggested_path,
            "search_available": search_available,
            "image_links": images,
        },
        ensure_ascii=False,
        indent=2,
    )


async def merge_with_llm(
    llm: AsyncOpenAI,
    settings: LLMSettings,
    executor: ToolExecutor,
    entry: MemoryEntry,
    images: dict[str, str],
    suggested_path: str,
) -> Confirmation:
    """Run the bounded tool loop; the validated confirmation, or ``MergeFailed``
    (also when the loop changed no note: then the entry would be nowhere)."""
    vault = executor.vault
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": await system_prompt(vault)},
        {
            "role": "user",
            "content": envelope(entry, "search" in executor.offered, images, suggested_path),
        },
    ]
    pacer = Pacer(quiet_of(llm), asyncio.get_running_loop().time() + settings.timeout)
    try:
        async with asyncio.timeout(settings.timeout):
            confirmation = await _loop(llm, pacer, settings, executor, messages)
    except TimeoutError:
        raise MergeFailed(f"the merge took longer than {settings.timeout:g} s") from None
    except (ReplyTooLarge, openai.OpenAIError) as exc:
        cut = too_large(exc)
        if cut is not None:
            raise MergeFailed(str(cut)) from None
        raise MergeFailed(f"the LLM endpoint failed: {describe_failure(exc)}") from exc
    require_a_change(executor, confirmation)
    require_the_entry(executor, entry)
    return confirmation


def require_a_change(executor: ToolExecutor, confirmation: Confirmation) -> None:
    """``MergeFailed`` when no note's text changed through the tools: whatever the model
    claims ("nothing to add", a write the vault refused), the entry is then nowhere, and
    the deterministic merge (which adds nothing twice) is the one to decide."""
    if executor.changed:
        return
    wrote = f"rewrote {executor.written} unchanged" if executor.written else "wrote nothing"
    summary = confirmation.update_summary[:200]
    raise MergeFailed(f"the model changed no note (it {wrote}; its summary: {summary!r})")


def require_the_entry(executor: ToolExecutor, entry: MemoryEntry) -> None:
    """``MergeFailed`` when the lines the merge added hold too few of the entry's words
    (``coverage``): the model wrote something else, and the entry would be nowhere
    while the merge said it was done."""
    notes = [
        (executor.originals.get(path, ""), executor.final_text(path)) for path in executor.changed
    ]
    share = merged_share(entry.content, notes)
    if share is not None and share < MIN_ADDED:
        raise MergeFailed(
            f"the notes the model wrote hold {share:.0%} of the entry's words"
            f" ({', '.join(executor.changed[:3])}): the entry is not in them"
        )


async def _loop(
    llm: AsyncOpenAI,
    pacer: Pacer,
    settings: LLMSettings,
    executor: ToolExecutor,
    messages: list[dict[str, Any]],
) -> Confirmation:
    tools = tool_schemas(executor.offered)
    used_tokens = 0
    nudged = False
    for _step in range(settings.max_steps):
        remaining = settings.max_tokens - used_tokens
        request = functools.partial(
            llm.chat.completions.create,
            model=settings.model,
            messages=messages,
            tools=tools,
            max_tokens=min(MAX_COMPLETION_TOKENS, remaining),
        )
        try:
            response = await pacer.ask(request)
        except (openai.OpenAIError, ReplyTooLarge):
            raise
        except ValueError as exc:  # a 200 whose JSON is cut short: the SDK lets it out
            raise MergeFailed(f"the LLM endpoint's reply is not JSON ({exc})") from None
        except RecursionError:  # (nested thousands deep: json's parser gives up)
            raise MergeFailed("the LLM endpoint's reply is JSON nested too deep") from None
        if not isinstance(response, ChatCompletion):  # the SDK hands on a body it cannot read
            body = repr(response)[:120]
            raise MergeFailed(f"the LLM endpoint did not answer a chat completion: {body}")
        reported: object = getattr(response.usage, "total_tokens", None)  # (its own number)
        if isinstance(reported, int) and not isinstance(reported, bool) and reported >= 0:
            used_tokens += reported
        else:  # none, null, negative: what the conversation weighs
            used_tokens += _estimate(messages)
        if used_tokens > settings.max_tokens:
            raise MergeFailed(f"the merge used more than {settings.max_tokens} tokens")
        try:
            message = reply_message(response)
        except MalformedReply as exc:
            raise MergeFailed(str(exc)) from None
        if getattr(response.choices[0], "finish_reason", None) == "length":
            # A reply stopped by max_tokens: its last tool call's note or its confirmation
            # is cut, and the calls before it are half of what the model meant to do.
            raise MergeFailed(
                f"the model's reply was cut short at its token limit"
                f" ({min(MAX_COMPLETION_TOKENS, remaining):,}); none of it was run"
            )
        turn = tool_turn(message.content, message.tool_calls or [], MAX_CALLS_PER_TURN)
        if turn.calls:
            messages.append(turn.message)
            # What the next turn will send, known before it is sent: the conversation (the
            # results of earlier turns too), whatever the model reported of its usage.
            ahead = max(used_tokens, _estimate(messages))
            for call in turn.calls:  # (a malformed call is said so, and none is run)
                if call.problem is not None:
                    raise MergeFailed(f"the model made a malformed tool call: {call.problem}")
                executor.check_call(call.name, call.arguments)
            if ahead > settings.max_tokens:  # (its calls' arguments alone: none is run)
                raise MergeFailed(
                    f"the merge used more than {settings.max_tokens} tokens"
                    " (the model's last reply; none of its calls was run)"
                )
            for number, call in enumerate(turn.calls):
                result = await executor.run(call.name, call.arguments)
                if number == len(turn.calls) - 1:
                    result = with_note(result, turn.dropped, MAX_CALLS_PER_TURN)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
                ahead += len(result) // 4
                if ahead > settings.max_tokens:
                    raise MergeFailed(f"the merge used more than {settings.max_tokens} tokens")
            continue
        text = message.content or ""
        try:
            return parse_confirmation(text, executor.written, executor.refused)
        except ValueError as exc:
            if nudged:
                raise MergeFailed(f"malformed confirmation: {exc}") from None
            nudged = True
            messages.append({"role": "assistant", "content": sendable(text)})
            messages.append(
                {
                    "role": "user",
                    "content": f"That is not a valid confirmation: {exc}. Reply with only the "
                    'JSON object {"updated_files": [...], "update_summary": "..."}.',
                }
            )
    raise MergeFailed(f"no confirmation after {settings.max_steps} model turns")


def _estimate(messages: list[dict[str, Any]]) -> int:
    """A rough token count when the endpoint reports no usage (4 chars per token)."""
    return sum(len(json.dumps(m, ensure_ascii=False)) for m in messages) // 4
