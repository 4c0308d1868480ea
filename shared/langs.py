"""What a vault id (``lang``) may be: one rule for the server, the index and the client.

``<lang>`` names a folder (``W/memory/languages/<lang>/vault``) and travels in every tool
call, so it is checked the same way everywhere: a BCP 47-like tag (``en``, ``ja``,
``zh-Hans``), at most ``MAX_LANG_CHARS`` characters, and not a name Windows keeps for a
device (``con``, ``nul``...: refused as a file's name too, so a workspace copies anywhere;
``con-x`` is a folder like any other).
"""

from __future__ import annotations

import re

from shared.errors import InvalidLangError
from shared.filetypes import DEVICE_NAMES

LANG_RE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
MAX_LANG_CHARS = 35


def is_lang(value: object) -> bool:
    """Whether ``value`` is a valid vault id."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_LANG_CHARS
        and LANG_RE.fullmatch(value) is not None
        and value.upper() not in DEVICE_NAMES
    )


def check_lang(value: object) -> str:
    """Return ``value`` if it is a vault id, else raise ``InvalidLangError`` (a ValueError)."""
    if not is_lang(value):
        raise InvalidLangError(
            f"{str(value)[:40]!r} is not a vault id (expected e.g. 'en', 'ja', 'zh-Hans',"
            f" at most {MAX_LANG_CHARS} characters, not a device name such as 'con')"
        )
    assert isinstance(value, str)
    return value


def language_of(lang: str) -> str:
    """The language a vault id names, for words kept per language: its first subtag,
    folded (``pt-BR``: ``pt``; ``zh-Hans``: ``zh``)."""
    return lang.split("-")[0].casefold()


def writes_traditional_chinese(lang: str) -> bool:
    """Whether vault id ``lang`` is Chinese in traditional characters: ``zh-Hant``
    (``zh-Hant-TW``...), or a Taiwan, Hong Kong or Macau ``zh`` naming no script, or
    Cantonese (``yue``) naming none; ``zh-Hans-HK`` is simplified."""
    tags = [tag.casefold() for tag in lang.split("-")]
    if tags[0] not in ("zh", "yue"):
        return False
    scripts = [tag for tag in tags[1:] if len(tag) == 4 and tag.isalpha()]
    if scripts:
        return scripts[0] == "hant"
    return tags[0] == "yue" or any(tag in ("tw", "hk", "mo") for tag in tags[1:])


def no_notes_said(lang: str, with_notes: list[str]) -> str:
    """What a search with no hit adds when vault ``lang`` has no notes (none made yet, or
    a typo in ``--lang``): the vaults that have some. One wording for both command
    lines; the tools answer such a vault as any empty one (a vault is made by its first
    write), with no results."""
    return (
        f"The vault {lang!r} has no notes (vaults with notes: {', '.join(with_notes) or 'none'})."
    )
