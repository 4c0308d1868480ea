"""The agent client's one settings object: CLI flag, then environment variable, then default.

Every setting is listed in ``SETTINGS_HELP`` (env var -> default, help); ``ClientSettings``
is built once (``ClientSettings.resolve(flags, os.environ)`` in ``main()``) and passed down.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

from shared.langs import check_lang
from shared.workspace import Workspace

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
            return environ.get(env, SETTINGS_HELP[env][0])

        workspace = pick("workspace", "AGENT_CLIENT_WORKSPACE")
        if not workspace:
            raise ValueError("no workspace: pass --workspace W or set AGENT_CLIENT_WORKSPACE")
        lang = pick("lang", "AGENT_CLIENT_LANG") or None
        tz_name = pick("tz", "AGENT_CLIENT_TZ")
        model = pick("model", "VAULT_LLM_MODEL")
        llm_mode = pick("llm", "AGENT_CLIENT_LLM").lower()
        if llm_mode not in ("auto", "off"):
            raise ValueError(f"AGENT_CLIENT_LLM must be 'auto' or 'off', not {llm_mode!r}")
        llm = None
        if model and llm_mode == "auto":
            llm = LLMSettings(
                model=model,
                base_url=pick("base_url", "OPENAI_BASE_URL") or None,
                api_key=pick("api_key", "OPENAI_API_KEY") or "unused",
                max_steps=int(pick("max_steps", "AGENT_CLIENT_LLM_MAX_STEPS")),
                max_tokens=int(pick("max_tokens", "AGENT_CLIENT_LLM_MAX_TOKENS")),
                timeout=float(pick("llm_timeout", "AGENT_CLIENT_LLM_TIMEOUT")),
                request_timeout=float(
                    pick("llm_request_timeout", "AGENT_CLIENT_LLM_REQUEST_TIMEOUT")
                ),
            )
        return cls(
            workspace=Path(workspace).expanduser().resolve(),
            lang=check_lang(lang) if lang else None,
            connect_timeout=float(pick("connect_timeout", "AGENT_CLIENT_CONNECT_TIMEOUT")),
            call_timeout=float(pick("call_timeout", "AGENT_CLIENT_CALL_TIMEOUT")),
            tz=ZoneInfo(tz_name) if tz_name else None,
            llm=llm,
            llm_fallback=pick("llm_fallback", "AGENT_CLIENT_LLM_FALLBACK") not in ("0", "false"),
            max_image_bytes=int(pick("max_image_bytes", "AGENT_CLIENT_MAX_IMAGE_BYTES")),
        )
