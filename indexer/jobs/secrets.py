"""Credentials kept out of what a model writes for the resident memory.

USER.md and PROJECT.md are quoted at the top of every recall block, to whatever model
the agent uses: an API key the maintenance model copied there from an event (its
prompt says not to) would travel with every turn. So the values of what looks like a
credential are replaced by ``[redacted]`` before the file is written: well-known key
formats (OpenAI, Anthropic, AWS keys and secrets, GitHub, Slack, Google, Stripe), JSON
web tokens,
bearer and basic authorization, private key blocks (PEM, PGP), the password in a URL,
and the value of a ``password``/``token``/``api_key``-like key that looks like one
(``_looks_secret``). Ordinary words stay: "token budget: 1500", "Token: ERC-20",
"password manager: yes", "api_key: $OPENAI_API_KEY" (where a key is kept is no key).
"""

from __future__ import annotations

import functools
import re

REDACTED = "[redacted]"

# Each starts only where a run of key characters starts (``_RUN``): one that fails is
# then read once, not again from each ``eyJ`` or ``sk-`` inside it (quadratic).
_RUN = r"(?<![A-Za-z0-9_.-])"
_KNOWN = (
    _RUN + r"sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key ids
    # AWS secret access keys (40 of base64's letters with both cases and a digit; a
    # git hash has no capital): named or not, as after an access key id
    r"|" + _RUN + r"(?<![/+=])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])"
    r"(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_.-])"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}"  # GitHub
    r"|\bglpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"
    r"|\bAIza[0-9A-Za-z_-]{30,}"  # Google API keys
    r"|\bSK[0-9a-f]{32}\b"  # Twilio
    r"|\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"  # Stripe
    r"|\bhf_[A-Za-z0-9]{30,}|\bnpm_[A-Za-z0-9]{36}|\bpypi-[A-Za-z0-9_-]{50,}"  # HF, npm, PyPI
    r"|" + _RUN + r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid
    r"|" + _RUN + r"[MN][A-Za-z0-9]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}"  # Discord
    r"|" + _RUN + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWTs
)
_AUTHORIZATION = r"(?i)\b((?:bearer|basic|token)[ \t]+)[A-Za-z0-9._~+/-]{16,}=*"
# A private key block (PEM, PGP) to its end line (read up to the next block's start at
# most: linear time); one cut short, to the last line of its key text
_PRIVATE_KEY = (
    r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:(?:[^-]++|-(?!----(?:BEGIN|END) ))*+-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"|(?:\r?\n(?:[A-Za-z0-9+/=]{16,}[^\r\n]*|(?:Proc-Type|DEK-Info|Version|Comment): [^\r\n]*"
    r"|[ \t]*(?=\r?\n)))*)"
)
_URL_PASSWORD = r"(://[^\s/:@]*:)[^\s/@]+(@)"
_REPLACED = (
    (_PRIVATE_KEY, REDACTED),
    (_KNOWN, REDACTED),
    (_AUTHORIZATION, rf"\g<1>{REDACTED}"),
    (_URL_PASSWORD, rf"\g<1>{REDACTED}\g<2>"),
)
# A key naming a credential (``PGPASSWORD`` too), then ``:``, ``=``, `` is `` or a table's
# ``|`` (quoted or not), then its value (groups 2-4: a password's key; a bare ``pass``
# is a boarding pass, not a password)
_ASSIGNED = (
    r"(?i)((?:\b(password|passwd|passphrase|passwort|kennwort)"
    r"|(?:_|\B(?=passw))(pass|pwd|passwd|password))"
    r"|(?:\b|_)(?:api[ _-]?key|apikey|secret(?:[_-]?key)?|access[_-]?key|client[_-]?secret"
    r"|account[_-]?key|auth[_-]?token|access[_-]?token|token)"
    r"|(密码|パスワード|비밀번호|пароль|contraseña|mot de passe))"
    r"""(["']?(?:[ \t]*[:=：|][ \t]*|[ \t]+(?:is|ist|est|es)[ \t]+|[ \t]*[是は][ \t]*)["'`]?)"""
    r"([^\s\"'`,;]{6,})"
)
# A value that names where the secret is, not the secret: ``$TOKEN``, ``${KEY}``,
# ``os.environ[...]``, ``settings.SECRET_KEY``, ``<your key>``
_REFERENCE = re.compile(r"(?i)^[$%<{/~]|environ|getenv|process\.env|settings\.|config\.")
_PROSE_END = re.compile(r"-[a-z]{4,}$")  # ``1Password-managed``, ``4096-context``


def redact_secrets(text: str) -> tuple[str, int]:
    """``text`` with each credential's value replaced by ``[redacted]``, and how many."""
    count = 0

    def assigned(match: re.Match[str]) -> str:
        nonlocal count
        password = any(match.group(group) is not None for group in (2, 3, 4))
        if not _looks_secret(match.group(6), password):
            return match.group(0)
        count += 1
        return match.group(1) + match.group(5) + REDACTED

    replaced, assigned_pattern = _compiled()
    for pattern, replacement in replaced:
        text, found = pattern.subn(replacement, text)
        count += found
    return assigned_pattern.sub(assigned, text), count


@functools.cache
def _compiled() -> tuple[list[tuple[re.Pattern[str], str]], re.Pattern[str]]:
    """The patterns above, compiled at the first redaction (a maintenance run), not at
    the import (5-10 ms of every server start, which runs none until one is due)."""
    replaced = [(re.compile(pattern), replacement) for pattern, replacement in _REPLACED]
    return replaced, re.compile(_ASSIGNED)


def _looks_secret(value: str, password: bool) -> bool:
    """A value that looks like a credential, not words a profile may well say
    ("manager", "stored-in-keychain", "ERC-20", "Santa_2024", "12文字以上",
    "1Password-managed") nor where one is kept ("$TOKEN", a path): ASCII, then a password
    of 6 characters or more with a digit, a symbol or both cases; any other of 16 or
    more with a digit, or of 24 or more."""
    if not value.isascii() or value.startswith(REDACTED) or _REFERENCE.search(value):
        return False
    if _PROSE_END.search(value):
        return False
    if len(value) >= 24:
        return True
    digit = any(char.isdigit() for char in value)
    if not password:
        return digit and len(value) >= 16
    plain = value.replace("-", "").replace("_", "").replace(".", "")
    return digit or not plain.isalpha() or (not plain.islower() and not plain.isupper())
