"""Credentials kept out of what a model writes for the resident memory.

USER.md and PROJECT.md are quoted at the top of every recall block, to whatever model
the agent uses: an API key the maintenance model copied there from an event (its
prompt says not to) would travel with every turn. So the values of what looks like a
credential are replaced by ``[redacted]`` before the file is written: well-known key
formats (OpenAI, Anthropic, AWS, GitHub, Slack, Google, Stripe), JSON web tokens,
bearer tokens, private key blocks, the password in a URL, and the value of a
``password``/``token``/``api_key``-like key of 8 characters or more. Ordinary words
stay: "token budget: 1500", "password manager: yes".
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"

_KNOWN = re.compile(
    r"\bsk-[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic (sk-ant-, sk-proj-)
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key ids
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}"  # GitHub
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|\bAIza[0-9A-Za-z_-]{35}"  # Google API keys
    r"|\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"  # Stripe
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JSON web tokens
)
_BEARER = re.compile(r"(?i)\b(bearer[ \t]+)[A-Za-z0-9._~+/-]{16,}=*")
# A private key block to its end line (read up to the next block's start at most: linear
# time); one cut short, to the last line of its key text
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"
    r"(?:(?:[^-]++|-(?!----(?:BEGIN|END) ))*+-----END [A-Z0-9 ]*PRIVATE KEY-----"
    r"|(?:\r?\n(?:[A-Za-z0-9+/=]{16,}[^\r\n]*|[A-Za-z-]+: [^\r\n]*))*)",
    re.DOTALL,
)
_URL_PASSWORD = re.compile(r"(://[^\s/:@]+:)[^\s/@]+(@)")
_REPLACED = (
    (_PRIVATE_KEY, REDACTED),
    (_KNOWN, REDACTED),
    (_BEARER, rf"\g<1>{REDACTED}"),
    (_URL_PASSWORD, rf"\g<1>{REDACTED}\g<2>"),
)
# A key naming a credential, then ``:`` or ``=`` (quoted or not), then its value
_ASSIGNED = re.compile(
    r"(?i)((?:\b|_)(?:api[_-]?key|apikey|secret(?:[_-]?key)?|access[_-]?key|client[_-]?secret"
    r"|auth[_-]?token|access[_-]?token|token|password|passwd|pwd|passphrase)"
    r"|密码|パスワード|비밀번호|пароль|contraseña|passwort|mot de passe)"
    r"""(["']?[ \t]*[:=：][ \t]*["']?)([^\s"'`,;]{8,})"""
)


def redact_secrets(text: str) -> tuple[str, int]:
    """``text`` with each credential's value replaced by ``[redacted]``, and how many."""
    count = 0

    def assigned(match: re.Match[str]) -> str:
        nonlocal count
        if not _looks_secret(match.group(3)):
            return match.group(0)
        count += 1
        return match.group(1) + match.group(2) + REDACTED

    for pattern, replacement in _REPLACED:
        text, found = pattern.subn(replacement, text)
        count += found
    return _ASSIGNED.sub(assigned, text), count


def _looks_secret(value: str) -> bool:
    """A value of one word holding a digit or a symbol, or long: not a plain word
    ("password: manager"), which a profile may well say; not one already redacted."""
    if value.startswith(REDACTED):
        return False
    return any(not char.isalpha() for char in value) or len(value) >= 24
