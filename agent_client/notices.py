"""Tell the host application what the writer did (``NoticeSink.notify(SystemNotice)``).

The chat agent decides whether to mention a notice to the user; the default sink only
logs it. A sink is called on the writer thread, so it must be quick and thread-safe.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Literal, Protocol

from shared.control_chars import printable

logger = logging.getLogger("agent_client.notices")


@dataclass(frozen=True)
class SystemNotice:
    """What one entry led to: the files written and a one-line summary (or the error)."""

    entry_id: str
    lang: str
    kind: Literal["knowledge", "event"]
    title: str
    ok: bool
    updated_files: list[str] = field(default_factory=list)
    update_summary: str = ""
    method: Literal["llm", "fallback", "event", "none"] = "none"
    error: str | None = None
    fallback_reason: str | None = None  # why the LLM did not merge it (method "fallback")


class NoticeSink(Protocol):
    def notify(self, notice: SystemNotice) -> None: ...


class LoggingNoticeSink:
    """Default sink: one log line per notice."""

    def notify(self, notice: SystemNotice) -> None:
        if notice.ok:
            logger.info(
                "memory %s %s (%s): %s %s%s",
                notice.kind,
                notice.entry_id,
                notice.method,
                # (a model's words, all three: escaped, as the indexer logs a name)
                printable(", ".join(notice.updated_files)),
                printable(notice.update_summary),
                f" [LLM failed: {printable(notice.fallback_reason)}]"
                if notice.fallback_reason
                else "",
            )


class CollectingNoticeSink:
    """Keeps every notice (for CLIs and tests that print or check what was written)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notices: list[SystemNotice] = []

    def notify(self, notice: SystemNotice) -> None:
        with self._lock:
            self._notices.append(notice)

    @property
    def notices(self) -> list[SystemNotice]:
        with self._lock:
            return list(self._notices)
