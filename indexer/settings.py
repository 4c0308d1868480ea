"""The indexer's one settings object: CLI flag, then environment variable, then default.

Every setting is listed in ``SETTINGS_HELP`` (the source of ``deploy/env.example``).
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from indexer.allowed_names import check_allowed
from indexer.jobs.llm import ModelSettings
from indexer.jobs.maintenance_tasks import TASKS, MaintenanceSettings
from indexer.logs import LOG_LEVELS
from shared.errors import ConfigError, words_of
from shared.model_endpoint import usable_url
from shared.numerals import REAL_WORDS, WHOLE_WORDS, real, whole
from shared.switches import parse_switch
from shared.workspace import Workspace, not_a_folder, workspace_path

PACKAGE_DIR = Path(__file__).resolve().parent


_HOST_NAME = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*\.?"
)
_DOTTED_NUMBERS = re.compile(r"[0-9.]+")


def default_prompts_dir() -> Path:
    """The prompt texts: inside the installed package (a wheel ships the repository's
    ``prompts/`` as ``indexer/prompts``), else the checkout's ``prompts/``."""
    packaged = PACKAGE_DIR / "prompts"
    return packaged if packaged.is_dir() else PACKAGE_DIR.parent / "prompts"


# env var -> (default as text, one-line help)
DAY_SECONDS = 86_400
SETTINGS_HELP: dict[str, tuple[str, str]] = {
    "INDEXER_WORKSPACE": ("", "workspace folder W (required; --workspace)"),
    "INDEXER_HOST": ("127.0.0.1", "address to bind; keep it loopback (--host)"),
    "INDEXER_PORT": ("0", "TCP port; 0 picks a free one (--port)"),
    "INDEXER_MCP_TOKEN": ("", "bearer token required of every MCP request when set (--token)"),
    "INDEXER_LOG_LEVEL": ("INFO", "log level: DEBUG logs one line per tool call (--log-level)"),
    "INDEXER_PROMPTS_DIR": ("", "folder of the prompt texts served over MCP (default: shipped)"),
    "INDEXER_MAX_FILE_BYTES": ("4194304", "largest file read or written through the tools"),
    "INDEXER_ALLOWED_HOSTS": (
        "",
        "extra Host values accepted, comma-separated: name (at the served port), name:port, name:*",
    ),
    "INDEXER_ALLOWED_ORIGINS": (
        "",
        "extra Origin values accepted, comma-separated: scheme://name[:port] (:* any port), null",
    ),
    "INDEXER_ECHO_TOOL": ("0", "1 registers an `echo` tool, the floor of bench/mcp_latency.py"),
    "INDEXER_ONE_CPU": ("1", "1 keeps the server's threads on one CPU (0: the kernel moves them)"),
    "INDEXER_HISTORY_DAYS": ("90", "days every version is kept (older: the last 20 per file)"),
    "INDEXER_CHECK_FIRST_MB": (
        "32",
        "MB of index checked before serving after an unclean stop (larger: once serving)",
    ),
    "INDEXER_MAX_CONNECTIONS": (
        "256",
        "most open HTTP connections (at the cap the longest idle goes)",
    ),
    "INDEXER_HEADER_TIMEOUT": ("10", "seconds a client may take to send a request's headers"),
    "INDEXER_BODY_TIMEOUT": ("30", "seconds a client may take to send a request's body"),
    "INDEXER_MIN_BODY_RATE": (
        "16384",
        "bytes a second a body must average after its first 5 s (0: no floor)",
    ),
    "INDEXER_MAX_REQUESTS": ("64", "most requests in flight; more are answered 503 at once"),
    "INDEXER_MAX_LARGE_BODIES": ("4", "most bodies over 256 KiB handled at once (others wait)"),
    "INDEXER_SESSION_IDLE_TIMEOUT": ("300", "seconds an idle MCP session (2025 protocol) is kept"),
    "INDEXER_SESSION_HANDSHAKE_TIMEOUT": (
        "15",
        "seconds an MCP session (2025 protocol) may wait for a request after initialize",
    ),
    "INDEXER_MAX_SESSIONS": ("200", "most MCP sessions (2025 protocol) open at once"),
    "INDEXER_SCAN_THREADS": ("0", "threads for grep and find (0: CPUs - 1, from 1 to 4)"),
    "INDEXER_LLM_MODEL": ("", "chat model for background jobs (empty: none, never called)"),
    "INDEXER_LLM_BASE_URL": ("", "OpenAI-compatible API base URL of that model"),
    "INDEXER_LLM_API_KEY": ("", "API key of that endpoint (a local server may need none)"),
    "INDEXER_LLM_MAX_CONCURRENCY": ("10", "most model requests in flight across all jobs"),
    "INDEXER_LLM_TIMEOUT": ("60", "seconds one model request may take"),
    "INDEXER_LLM_MAX_TOKENS": ("2048", "most tokens one model answer may hold"),
    "INDEXER_MAINTENANCE_USER_PROFILE": (
        "0",
        "1: keep USER.md (the person) distilled from events/ (--maintenance-user-profile)",
    ),
    "INDEXER_MAINTENANCE_PROJECT_REVIEW": (
        "0",
        "1: keep PROJECT.md (goals, threads, decisions) from events/ "
        "(--maintenance-project-review)",
    ),
    "INDEXER_MAINTENANCE_MIN_INTERVAL_HOURS": (
        "24",
        "hours between two successful runs of a task (--maintenance-min-interval-hours)",
    ),
    "INDEXER_MAINTENANCE_CHECK_MINUTES": (
        "30",
        "minutes between the daemon's checks whether a maintenance task is due",
    ),
    "INDEXER_MAINTENANCE_DEBOUNCE_SECONDS": (
        "60",
        "quiet seconds after an event write before the daemon checks that vault",
    ),
    "INDEXER_MAINTENANCE_MAX_STEPS": ("8", "most model turns of one maintenance run"),
    "INDEXER_MAINTENANCE_TIMEOUT": ("300", "seconds one maintenance run may take"),
    "INDEXER_MAINTENANCE_USER_PROFILE_PROMPT": (
        "",
        "file replacing the shipped prompt prompts/maintenance/user_profile.md",
    ),
    "INDEXER_MAINTENANCE_PROJECT_REVIEW_PROMPT": (
        "",
        "file replacing the shipped prompt prompts/maintenance/project_review.md",
    ),
    "INDEXER_SUMMARIES": ("1", "1 keeps a summary (.overview.md) of every folder; 0: none"),
    "INDEXER_SUMMARIES_MAX_CHILDREN": ("50", "most recent children of a folder a summary shows"),
    "INDEXER_SUMMARIES_DEBOUNCE": ("2", "seconds without changes before summaries are redone"),
}


def unknown_settings(environ: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """The ``INDEXER_*`` variables of ``environ`` that are no setting, each with the one
    it most looks like (None when none does), sorted: ``INDEXER_TOKEN=secret`` (for
    ``INDEXER_MCP_TOKEN``) served without a token, and ``INDEXER_PROT=8765`` on a free
    port, and nothing said so. Warned of, not refused: a setting an older version had,
    left in an env file, is no reason not to start."""
    import difflib  # (only when one is found)

    unknown = sorted(name for name in environ if name.startswith("INDEXER_"))
    found = []
    for name in (name for name in unknown if name not in SETTINGS_HELP):
        close = difflib.get_close_matches(name, SETTINGS_HELP, n=1, cutoff=0.8)
        found.append((name, close[0] if close else None))
    return found


@dataclass(frozen=True)
class ServerLimits:
    """What clients may hold of the server (``indexer.web.connections`` and ``limits``)."""

    max_connections: int = 256
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    # 16 KiB/s: a 1 MB note over a 128 kbit/s link passes (61 s, within the 4 body
    # timeouts any body gets); stalled senders leave the large-body places in 5 s
    min_body_rate: int = 16 * 1024
    max_requests: int = 64
    max_large_bodies: int = 4
    session_idle_timeout: float = 300.0
    # A client sends its next request (notifications/initialized) at once after
    # initialize: a session silent that long was abandoned (``indexer.web.sessions``)
    session_handshake_timeout: float = 15.0
    max_sessions: int = 200
    scan_threads: int = 0  # 0: indexer.scans.default_threads()


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one ``indexer`` process."""

    workspace: Workspace
    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None
    log_level: str = "INFO"
    prompts_dir: Path = field(default_factory=default_prompts_dir)
    max_file_bytes: int = 4 * 1024 * 1024
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    echo_tool: bool = False
    one_cpu: bool = True
    history_days: int = 90
    check_first_mb: int = 32  # (``indexer.index.late_check``)
    model: ModelSettings | None = None
    maintenance: MaintenanceSettings = field(default_factory=MaintenanceSettings)
    summaries: bool = True
    summaries_max_children: int = 50
    summaries_debounce: float = 2.0
    limits: ServerLimits = field(default_factory=ServerLimits)

    @classmethod
    def resolve(cls, flags: Mapping[str, object], environ: Mapping[str, str]) -> Settings:
        """Build settings from parsed CLI ``flags`` (None = not given) and ``environ``;
        a bad value is refused by the name it was given by (``--port``, ``INDEXER_PORT``)."""
        given: dict[str, str] = {}  # variable -> the flag that set it instead

        def pick(flag: str, env: str) -> str:
            value = flags.get(flag)
            if value is not None:
                given[env] = "--" + flag.replace("_", "-")
                return str(value)
            return environ.get(env) or SETTINGS_HELP[env][0]  # empty: the default

        try:
            return cls._resolved(pick)
        except ValueError as err:
            said = words_of(err)
            named = said.split(" ", 1)[0].rstrip(":")
            if named in given:
                said = given[named] + said[len(named) :]
            raise ConfigError(said) from None

    @classmethod
    def _resolved(cls, pick: Callable[[str, str], str]) -> Settings:
        workspace = pick("workspace", "INDEXER_WORKSPACE")
        if not workspace:
            raise ValueError("no workspace: pass --workspace W or set INDEXER_WORKSPACE")
        root = workspace_path(workspace)
        if (why := not_a_folder(root)) is not None:
            raise ValueError(why)
        prompts = pick("prompts_dir", "INDEXER_PROMPTS_DIR")
        if prompts and not Path(prompts).is_dir():  # no prompts were served, silently
            raise ValueError(f"INDEXER_PROMPTS_DIR: {prompts} is not a folder")
        allowed_hosts = _split(pick("allowed_hosts", "INDEXER_ALLOWED_HOSTS"))
        allowed_origins = _split(pick("allowed_origins", "INDEXER_ALLOWED_ORIGINS"))
        check_allowed(allowed_hosts, allowed_origins)  # (the guard dropped them, silently)
        return cls(
            workspace=Workspace(root),
            host=_host(pick("host", "INDEXER_HOST")),
            port=_whole("INDEXER_PORT", pick("port", "INDEXER_PORT"), 0, 65535),
            token=_token(pick("token", "INDEXER_MCP_TOKEN")),
            log_level=_log_level(pick("log_level", "INDEXER_LOG_LEVEL")),
            prompts_dir=Path(prompts) if prompts else default_prompts_dir(),
            max_file_bytes=_whole(
                "INDEXER_MAX_FILE_BYTES",
                pick("max_file_bytes", "INDEXER_MAX_FILE_BYTES"),
                1,
                1 << 40,
            ),
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            echo_tool=_switch(pick, "echo_tool", "INDEXER_ECHO_TOOL"),
            one_cpu=_switch(pick, "one_cpu", "INDEXER_ONE_CPU"),
            history_days=_history_days(pick("history_days", "INDEXER_HISTORY_DAYS")),
            check_first_mb=_whole(
                "INDEXER_CHECK_FIRST_MB",
                pick("check_first_mb", "INDEXER_CHECK_FIRST_MB"),
                0,
                1 << 30,
            ),
            model=_model_settings(pick),
            maintenance=_maintenance_settings(pick),
            summaries=_switch(pick, "summaries", "INDEXER_SUMMARIES"),
            summaries_max_children=_whole(
                "INDEXER_SUMMARIES_MAX_CHILDREN",
                pick("summaries_max_children", "INDEXER_SUMMARIES_MAX_CHILDREN"),
                1,
                100_000,
            ),
            summaries_debounce=_real(
                "INDEXER_SUMMARIES_DEBOUNCE",
                pick("summaries_debounce", "INDEXER_SUMMARIES_DEBOUNCE"),
                0,
                DAY_SECONDS,
            ),
            limits=_limits(pick),
        )


def _limits(pick: Callable[[str, str], str]) -> ServerLimits:
    def count(env: str) -> int:
        return _whole(env, pick(env.lower().removeprefix("indexer_"), env), 1, 1_000_000)

    def seconds(env: str) -> float:
        return _real(
            env, pick(env.lower().removeprefix("indexer_"), env), 0, DAY_SECONDS, above=True
        )

    return ServerLimits(
        max_connections=count("INDEXER_MAX_CONNECTIONS"),
        header_timeout=seconds("INDEXER_HEADER_TIMEOUT"),
        body_timeout=seconds("INDEXER_BODY_TIMEOUT"),
        min_body_rate=_whole(
            "INDEXER_MIN_BODY_RATE", pick("min_body_rate", "INDEXER_MIN_BODY_RATE"), 0, 1 << 30
        ),
        max_requests=count("INDEXER_MAX_REQUESTS"),
        max_large_bodies=count("INDEXER_MAX_LARGE_BODIES"),
        session_idle_timeout=seconds("INDEXER_SESSION_IDLE_TIMEOUT"),
        session_handshake_timeout=seconds("INDEXER_SESSION_HANDSHAKE_TIMEOUT"),
        max_sessions=count("INDEXER_MAX_SESSIONS"),
        scan_threads=_whole(
            "INDEXER_SCAN_THREADS", pick("scan_threads", "INDEXER_SCAN_THREADS"), 0, 1024
        ),
    )


def _whole(env: str, text: str, low: int, high: int) -> int:
    """A whole-number setting from ``low`` to ``high``; else ``ValueError`` naming it."""
    value = whole(text.strip())  # (ASCII digits, as REST's: int() took ٣ and 1_000)
    if value is None or not low <= value <= high:
        written = "" if value is not None else f" in {WHOLE_WORDS}"
        raise ValueError(
            f"{env} must be a whole number from {low} to {high}{written}, not {text[:40]!r}"
        )
    return value


def _real(env: str, text: str, low: float, high: float, *, above: bool = False) -> float:
    """A finite number setting from ``low`` (or above it) to ``high``; else ``ValueError``
    naming it (``inf`` and ``nan`` overflowed later, or made every request time out)."""
    value = real(text.strip())  # (ASCII, as REST's numbers: float() took ٣ and 1_0)
    written = "" if value is not None else f" in {REAL_WORDS}"
    if value is None:
        value = math.nan
    if not (math.isfinite(value) and low <= value <= high) or (above and value == low):
        bound = f"above {low:g}" if above else f"from {low:g}"
        raise ValueError(f"{env} must be a number {bound} to {high:g}{written}, not {text[:40]!r}")
    return value


def _token(text: str) -> str | None:
    """The bearer token, or None; one no client could send as it is is refused (clients
    strip the token file, and a header holds printable ASCII)."""
    if not text:
        return None
    if text != text.strip() or not (text.isascii() and text.isprintable()):
        raise ValueError(
            "INDEXER_MCP_TOKEN must be printable ASCII with no space at either end "
            "(clients send it as an HTTP header)"
        )
    return text


def _model_settings(pick: Callable[[str, str], str]) -> ModelSettings | None:
    """The background jobs' model, or None when ``INDEXER_LLM_MODEL`` is not set (its other
    settings are checked all the same: ``ftp://x`` or a concurrency of ``ten`` was taken
    until a model was set, days later)."""
    model = pick("llm_model", "INDEXER_LLM_MODEL")
    base_url = usable_url("INDEXER_LLM_BASE_URL", pick("llm_base_url", "INDEXER_LLM_BASE_URL"))
    concurrency = _whole(
        "INDEXER_LLM_MAX_CONCURRENCY",
        pick("llm_max_concurrency", "INDEXER_LLM_MAX_CONCURRENCY"),
        1,
        1024,
    )
    timeout = _real(
        "INDEXER_LLM_TIMEOUT",
        pick("llm_timeout", "INDEXER_LLM_TIMEOUT"),
        0,
        DAY_SECONDS,
        above=True,
    )
    max_tokens = _whole(
        "INDEXER_LLM_MAX_TOKENS", pick("llm_max_tokens", "INDEXER_LLM_MAX_TOKENS"), 1, 1_000_000
    )
    if not model:
        return None
    return ModelSettings(
        model=model,
        base_url=base_url or None,
        api_key=pick("llm_api_key", "INDEXER_LLM_API_KEY") or "unused",
        max_concurrency=concurrency,
        timeout=timeout,
        max_tokens=max_tokens,
    )


def _maintenance_settings(pick: Callable[[str, str], str]) -> MaintenanceSettings:
    """``INDEXER_MAINTENANCE_*``: the tasks switched on, their pace and their prompts."""
    enabled = frozenset(
        name
        for name in TASKS
        if _switch(pick, f"maintenance_{name}", f"INDEXER_MAINTENANCE_{name.upper()}")
    )
    bounds = {  # (the most, whether it must be above 0)
        "maintenance_min_interval_hours": (24 * 3650, False),
        "maintenance_check_minutes": (60 * 24 * 365, True),
        "maintenance_debounce_seconds": (DAY_SECONDS, False),
        "maintenance_timeout": (DAY_SECONDS, True),
    }
    numbers = {
        key: _real(
            f"INDEXER_{key.upper()}", pick(key, f"INDEXER_{key.upper()}"), 0, most, above=above
        )
        for key, (most, above) in bounds.items()
    }
    steps = _whole(
        "INDEXER_MAINTENANCE_MAX_STEPS",
        pick("maintenance_max_steps", "INDEXER_MAINTENANCE_MAX_STEPS"),
        1,
        1000,
    )
    prompts = {}
    for name in TASKS:
        env = f"INDEXER_MAINTENANCE_{name.upper()}_PROMPT"
        prompt = pick(f"maintenance_{name}_prompt", env)
        if prompt:
            if not Path(prompt).is_file():  # each run failed on it, and was retried
                raise ValueError(f"{env}: {prompt} is not a file")
            try:  # (read at each run; a Latin-1 file failed each with a traceback)
                Path(prompt).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"{env}: {prompt} cannot be read as UTF-8 text ({exc})") from None
            prompts[name] = Path(prompt)
    return MaintenanceSettings(
        enabled=enabled,
        min_interval_hours=numbers["maintenance_min_interval_hours"],
        check_minutes=numbers["maintenance_check_minutes"],
        debounce_seconds=numbers["maintenance_debounce_seconds"],
        max_steps=steps,
        timeout=numbers["maintenance_timeout"],
        prompt_files=prompts,
    )


def _switch(pick: Callable[[str, str], str], flag: str, env: str) -> bool:
    """An on/off setting (``shared.switches``), named by its variable when refused."""
    return parse_switch(env, pick(flag, env))


def _log_level(text: str) -> str:
    """A logging level by name, refused with the variable's name (logging's own error
    named neither it nor the levels)."""
    level = text.strip().upper()
    if level not in LOG_LEVELS:
        raise ValueError(
            f"INDEXER_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {text!r:.60}"
        )
    return level


def _host(text: str) -> str:
    """An address to listen on: an IP address or a host name (no lookup here: a name
    that does not resolve fails the start with its own message)."""
    bare = text.strip().removeprefix("[").removesuffix("]")
    try:
        ipaddress.ip_address(bare)
        return bare
    except ValueError:
        pass
    if not _HOST_NAME.fullmatch(bare) or _DOTTED_NUMBERS.fullmatch(bare):
        raise ValueError(f"INDEXER_HOST must be an IP address or a host name, not {text!r:.60}")
    return bare


def _history_days(text: str) -> int:
    return _whole("INDEXER_HISTORY_DAYS", text, 0, 36_500)


def _split(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())
