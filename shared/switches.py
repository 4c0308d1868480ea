"""On/off settings both programs read from the environment, spelled one way."""

from __future__ import annotations

from shared.errors import ConfigError

ON = ("1", "true", "yes", "on")
OFF = ("0", "false", "no", "off")


def parse_switch(name: str, text: str) -> bool:
    """On (1, true, yes, on) or off (0, false, no, off); ``ConfigError`` for anything else:
    a typo (``INDEXER_SUMMARIES=maybe``) silently turned the feature off."""
    value = text.strip().lower()
    if value in ON:
        return True
    if value in OFF:
        return False
    raise ConfigError(f"{name} must be 1 or 0 (true/false, yes/no, on/off), not {text!r:.40}")
