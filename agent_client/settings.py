"""The agent client's one settings object: CLI flag, then environment variable, then default.

Every setting is listed in ``SETTINGS_HELP`` (env var -> default, help); ``ClientSettings``
is built once (``ClientSettings.resolve(flags, os.environ)`` in ``main()``) and passed down.
A bad value is refused here, where it is read, with ``ConfigError`` (a ``ValueError``)
naming the variable: an unknown time zone or an infinite timeout used to surface later
as a traceback from deep inside the writer or the transport.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from shared.errors import ConfigError
from shared.langs import check_lang
from shared.local_zone import warn_unknown_zone
from shared.model_endpoint import usable_url
from shared.numerals import REAL_WORDS, WHOLE_WORDS, real, whole
from shared.switches import parse_switch
from shared.workspace import Workspace, workspace_path

# env var -> (default as text, one-line help)
SETTINGS_HELP: dict[str, tuple[str, str]] = {
    "AGENT_CLIENT_WORKSPACE": ("", "workspace folder W holding indexer.mcp.url (--workspace)"),
    "AGENT_CLIENT_LANG": ("", "vault id agent-client commands use without --lang, e.g. en"),
    "AGENT_CLIENT_CONNECT_TIMEOUT": (
        "2.0",
        "seconds to open a connection to the indexer before it counts as offline",
    ),
    "AGENT_CLIENT_CALL_TIMEOUT": ("30.0", "seconds one MCP tool call may take"),
    "AGENT_CLIENT_TZ": (
        "",
        "IANA time zone for event day files, e.g. Europe/Paris (empty: the machine's zone)",
    ),
    "AGENT_CLIENT_LLM": ("auto", "auto: use the LLM when VAULT_LLM_MODEL is set; off: never"),
    "AGENT_CLIENT_LLM_FALLBACK": (
        "1",
        "1: when the LLM merge fails, undo it and merge deterministically; 0: drop the entry",
    ),
    "AGENT_CLIENT_LLM_MAX_STEPS": ("12", "most model turns in one knowledge merge"),
    "AGENT_CLIENT_LLM_MAX_TOKENS": ("60000", "most tokens (prompt + completion) per merge"),
    "AGENT_CLIENT_LLM_TIMEOUT": ("120.0", "seconds one whole knowledge merge may take"),
    "AGENT_CLIENT_LLM_REQUEST_TIMEOUT": ("60.0", "seconds one chat-completions request may take"),
    "AGENT_CLIENT_MAX_IMAGE_BYTES": ("3000000", "largest image file an entry may attach"),
    "OPENAI_BASE_URL": ("", "OpenAI-compatible API base URL (empty: the SDK's default)"),
    "OPENAI_API_KEY": ("", "API key for the LLM endpoint (a local server may need none)"),
    "VAULT_LLM_MODEL": ("", "chat model used to merge knowledge (empty: no LLM, fallback only)"),
}


# The longest wait any timeout may ask for. A timeout bounds a wait, and a day bounds
# any real one; inf (or 1e300) overflows the clocks of the event loop and of threads.
MAX_TIMEOUT_SECONDS = 86400.0


def _is_seconds(value: object) -> bool:
    """Whether ``value`` is a usable timeout: a finite number above 0, at most a day."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return math.isfinite(value) and 0 < value <= MAX_TIMEOUT_SECONDS


def _seconds_error(name: str, shown: object, written: str = "") -> ConfigError:
    return ConfigError(
        f"{name} must be a number of seconds above 0 and at most "
        f"{MAX_TIMEOUT_SECONDS:.0f}{written}, not {shown!r:.40}"
    )


def check_seconds(name: str, value: object) -> float:
    """``value`` if it is a timeout in seconds (0 < value <= a day), else ``ConfigError``."""
    if not _is_seconds(value):
        raise _seconds_error(name, value)
    assert isinstance(value, int | float)
    return float(value)


def check_count(name: str, value: object) -> int:
    """``value`` if it is a whole number of at least 1, else ``ConfigError``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{name} must be a whole number of at least 1, not {value!r:.40}")
    return value


def parse_seconds(name: str, text: str) -> float:
    """The timeout ``text`` (an environment variable's value) means; ``ConfigError`` if none."""
    number = real(text.strip())  # (ASCII, as REST's numbers: float() took ٣ and 1_0)
    if number is None or not _is_seconds(number):
        raise _seconds_error(name, text, "" if number is not None else f" in {REAL_WORDS}")
    return number


def parse_count(name: str, text: str) -> int:
    """The whole number ``text`` means (at least 1); ``ConfigError`` if none."""
    number = whole(text.strip())  # (ASCII digits, as REST's: int() took ٣ and 1_000)
    if number is None or number < 1:
        written = "" if number is not None else f" in {WHOLE_WORDS}"
        raise ConfigError(
            f"{name} must be a whole number of at least 1{written}, not {text[:40]!r}"
        )
    return number


def parse_time_zone(name: str, text: str) -> tzinfo | None:
    """The IANA zone ``text`` names (None when empty: the machine's); ``ConfigError`` if none.

    ``ZoneInfo`` raises ``KeyError`` for an unknown key, ``ValueError`` for a path-like
    one and ``OSError`` for a folder (``America``): one refusal for all of them.
    """
    if not text:
        return None
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ConfigError(
            f"{name}: {text!r:.60} is not an IANA time zone (e.g. Europe/Paris, UTC)"
        ) from None


@dataclass(frozen=True)
class LLMSettings:
    """How to reach the model and how far one merge may go."""

    model: str
    base_url: str | None = None
    api_key: str = "unused"
    max_steps: int = 12
    max_tokens: int = 60000
    timeout: float = 120.0
    request_timeout: float = 60.0

    def __post_init__(self) -> None:
        """Refuse what a library user passes that no merge could run with."""
        check_count("max_steps", self.max_steps)
        check_count("max_tokens", self.max_tokens)
        check_seconds("timeout", self.timeout)
        check_seconds("request_timeout", self.request_timeout)


@dataclass(frozen=True)
class ClientSettings:
    """Resolved settings of one agent-client process."""

    workspace: Path
    lang: str | None = None  # the CLI's default vault (the writer takes lang per entry)
    connect_timeout: float = 2.0
    call_timeout: float = 30.0
    tz: tzinfo | None = None
    llm: LLMSettings | None = None
    llm_fallback: bool = True
    max_image_bytes: int = 3_000_000

    def __post_init__(self) -> None:
        """Refuse what a library user passes that the writer could not wait or count by."""
        check_seconds("connect_timeout", self.connect_timeout)
        check_seconds("call_timeout", self.call_timeout)
        check_count("max_image_bytes", self.max_image_bytes)

    @property
    def entry_seconds(self) -> float:
        """How long one entry may take the writer: its model's time and four calls (its
        reads, writes, confirmation). A wait on another client writing the same entry
        is bounded by it too."""
        return (self.llm.timeout if self.llm else 0) + 4 * self.call_timeout

    @property
    def url_file(self) -> Path:
        return Workspace(self.workspace).url_file

    @property
    def token_file(self) -> Path:
        return Workspace(self.workspace).token_file

    @classmethod
    def resolve(
        cls, flags: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None
    ) -> ClientSettings:
        """Build settings from CLI ``flags`` (None = not given) and ``environ``."""
        flags = flags or {}
        environ = os.environ if environ is None else environ

        def pick(flag: str, env: str) -> str:
            value = flags.get(flag)
            if value is not None:
                return str(value)
            return environ.get(env) or SETTINGS_HELP[env][0]  # empty: the default

        workspace = pick("workspace", "AGENT_CLIENT_WORKSPACE")
        if not workspace:
            raise ConfigError("no workspace: pass --workspace W or set AGENT_CLIENT_WORKSPACE")
        lang = pick("lang", "AGENT_CLIENT_LANG") or None
        tz = parse_time_zone("AGENT_CLIENT_TZ", pick("tz", "AGENT_CLIENT_TZ"))
        if tz is None:  # (the machine's zone: one that TZ names, or UTC silently)
            warn_unknown_zone(logging.getLogger("agent_client"))
        model = pick("model", "VAULT_LLM_MODEL")
        llm_mode = pick("llm", "AGENT_CLIENT_LLM").lower()
        if llm_mode not in ("auto", "off"):
            raise ConfigError(f"AGENT_CLIENT_LLM must be 'auto' or 'off', not {llm_mode!r}")
        # Checked with or without a model: a bad value is said now, not once one is set.
        llm = LLMSettings(
            model=model,
            base_url=_base_url(pick("base_url", "OPENAI_BASE_URL")) or None,
            api_key=pick("api_key", "OPENAI_API_KEY") or "unused",
            max_steps=parse_count(
                "AGENT_CLIENT_LLM_MAX_STEPS", pick("max_steps", "AGENT_CLIENT_LLM_MAX_STEPS")
            ),
            max_tokens=parse_count(
                "AGENT_CLIENT_LLM_MAX_TOKENS",
                pick("max_tokens", "AGENT_CLIENT_LLM_MAX_TOKENS"),
            ),
            timeout=parse_seconds(
                "AGENT_CLIENT_LLM_TIMEOUT", pick("llm_timeout", "AGENT_CLIENT_LLM_TIMEOUT")
            ),
            request_timeout=parse_seconds(
                "AGENT_CLIENT_LLM_REQUEST_TIMEOUT",
                pick("llm_request_timeout", "AGENT_CLIENT_LLM_REQUEST_TIMEOUT"),
            ),
        )
        return cls(
            workspace=workspace_path(workspace),
            lang=check_lang(lang) if lang else None,
            connect_timeout=parse_seconds(
                "AGENT_CLIENT_CONNECT_TIMEOUT",
                pick("connect_timeout", "AGENT_CLIENT_CONNECT_TIMEOUT"),
            ),
            call_timeout=parse_seconds(
                "AGENT_CLIENT_CALL_TIMEOUT", pick("call_timeout", "AGENT_CLIENT_CALL_TIMEOUT")
            ),
            tz=tz,
            llm=llm if model and llm_mode == "auto" else None,
            llm_fallback=parse_switch(
                "AGENT_CLIENT_LLM_FALLBACK", pick("llm_fallback", "AGENT_CLIENT_LLM_FALLBACK")
            ),
            max_image_bytes=parse_count(
                "AGENT_CLIENT_MAX_IMAGE_BYTES",
                pick("max_image_bytes", "AGENT_CLIENT_MAX_IMAGE_BYTES"),
            ),
        )


def _base_url(value: str) -> str:
    """``OPENAI_BASE_URL`` (or ``--base-url``) once the model's client can call it, as
    the indexer checks its own: ``ftp://x`` failed every merge later, as a fallback."""
    try:
        return usable_url("OPENAI_BASE_URL", value)
    except ValueError as err:
        raise ConfigError(str(err)) from None
