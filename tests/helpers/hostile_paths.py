"""Hostile paths and the traps they aim at, shared by the sandbox's tests and the
Claude memory tool's path-safety tests (which apply them below ``/memories``)."""

from __future__ import annotations

import os
from pathlib import Path

FORBIDDEN = "forbidden_path"
BAD_LANG = "invalid_lang"

HOSTILE: list[tuple[str, str, str]] = [
    ("en", "../vault2/secret.md", FORBIDDEN),
    ("en", "..", FORBIDDEN),
    ("en", "../../ja/vault/secret.md", FORBIDDEN),
    ("en", "items/../../vault2/secret.md", FORBIDDEN),
    ("en", "items/../../../../../../../../etc/passwd", FORBIDDEN),
    ("en", "items/../..", FORBIDDEN),  # ("items/.." is the vault root: inside)
    ("en", "/etc/passwd", FORBIDDEN),
    ("en", "//etc/passwd", FORBIDDEN),
    ("en", "/", FORBIDDEN),
    ("en", "~/secret.md", FORBIDDEN),
    ("en", "~root/secret.md", FORBIDDEN),
    ("en", "./~new.md", FORBIDDEN),  # (was written, then refused by every other tool)
    ("en", "items/../~new.md", FORBIDDEN),
    ("en", "items/~new.md", FORBIDDEN),  # one rule for every place
    ("en", "items/\x00.md", FORBIDDEN),
    ("en", "items/a\nb.md", FORBIDDEN),
    ("en", "items/a\tb.md", FORBIDDEN),
    ("en", "items/\x1b[31m.md", FORBIDDEN),
    ("en", "items/\x7f.md", FORBIDDEN),
    ("en", "items/\u0085.md", FORBIDDEN),
    ("en", "items/x.md\u202e", FORBIDDEN),
    ("en", "items\\..\\..\\vault2\\secret.md", FORBIDDEN),
    ("en", "C:/secret.md", FORBIDDEN),
    ("en", "items/a.md ", FORBIDDEN),
    ("en", "items/a.md.", FORBIDDEN),
    ("en", "items/ .md", FORBIDDEN),
    ("en", "items/\u00a0.md", FORBIDDEN),
    ("en", "\u3000/a.md", FORBIDDEN),
    ("en", "\ud800.md", FORBIDDEN),
    ("en", "link_out/secret.md", FORBIDDEN),
    ("en", "link_out", FORBIDDEN),
    ("en", "file_link.md", FORBIDDEN),
    ("en", "dangling.md", FORBIDDEN),
    ("en", "loop1/x.md", FORBIDDEN),
    ("en", "loop1", FORBIDDEN),
    ("en", "inner_link/a.md", FORBIDDEN),
    ("en", "prefix_link/secret.md", FORBIDDEN),
    ("en", "pipe.md", FORBIDDEN),
    ("en", "items/a.md/b.md", FORBIDDEN),
    ("en", ".hidden.md", FORBIDDEN),
    ("en", "items/.git/config", FORBIDDEN),
    ("en", "../../../../.indexer/lock", FORBIDDEN),
    ("en", ".indexer/index.sqlite", FORBIDDEN),
    ("en", "a" * 300 + ".md", FORBIDDEN),
    ("en", "é" * 130 + ".md", FORBIDDEN),
    ("en", "/".join(["d"] * 40) + "/x.md", FORBIDDEN),
    ("en", "x" * 1100, FORBIDDEN),
    ("zh-Hans", "../../en/vault/items/a.md", FORBIDDEN),
    ("../en", "items/a.md", BAD_LANG),
    ("en/../ja", "secret.md", BAD_LANG),
    ("", "items/a.md", BAD_LANG),
    ("EN", "items/a.md", BAD_LANG),
    ("en\x00", "items/a.md", BAD_LANG),
    (".indexer", "lock", BAD_LANG),
    ("vault", "secret.md", BAD_LANG),
    ("en-", "a.md", BAD_LANG),
    ("con", "a.md", BAD_LANG),  # a vault id names a folder: no device name, as for files
    ("nul", "a.md", BAD_LANG),
    ("en" + "-abcdefgh" * 40, "a.md", BAD_LANG),
    ("en", "items/a\u200bb.md", FORBIDDEN),
    ("en", "items/a\ufeffb.md", FORBIDDEN),
    ("en", "items/a\u2028b.md", FORBIDDEN),
    ("en", "items/a\u2029b.md", FORBIDDEN),
    ("en", "CON.md", FORBIDDEN),
    ("en", "items/aux.notes.md", FORBIDDEN),
    ("en", "lpt1/x.md", FORBIDDEN),
    ("en", "COM0.md", FORBIDDEN),  # Windows reserves COM0-9, LPT0-9,
    ("en", "items/lpt0.txt.md", FORBIDDEN),
    ("en", "COM\u00b9.md", FORBIDDEN),  # and COM¹ (NFKC: COM1)
    ("en", "LPT\u00b3/x.md", FORBIDDEN),
    ("en", "\uff0e\uff0e/vault2/secret.md", FORBIDDEN),
    ("en", "items/%2e%2e/secret.md", FORBIDDEN),
    ("en", "items/%252e%252e/secret.md", FORBIDDEN),
    ("en", "items/a\uff0fb.md", FORBIDDEN),
    # names that read as another, or as nothing (each was stored beside "go.md")
    ("en", "items/g\u034fo.md", FORBIDDEN),  # combining grapheme joiner
    ("en", "items/go\ufe0f.md", FORBIDDEN),  # a variation selector after a Latin letter
    ("en", "items/\ufe0fgo.md", FORBIDDEN),
    ("en", "items/\u3164.md", FORBIDDEN),  # Hangul filler
    ("en", "items/\u115f\u1160.md", FORBIDDEN),
    ("en", "items/a\u17b4.md", FORBIDDEN),  # Khmer inherent vowel
    ("en", "items/\u2800.md", FORBIDDEN),  # braille blank alone
    ("en", "items/\u200c\u200d.md", FORBIDDEN),
    ("en", "items/\u845b\U000e0100\U000e0100.md", FORBIDDEN),  # a selector after a selector
    ("en", "items/caf\u00e9\ufe0f.md", FORBIDDEN),  # a selector after a letter that has none
    ("en", "items/\u0434\u043e\u043c\ufe0e.md", FORBIDDEN),
    ("en", "items/\u65e5\u672c\ufe0f.md", FORBIDDEN),  # emoji style of an ideograph
    ("en", "items/go\u200d.md", FORBIDDEN),  # joiners that join nothing
    ("en", "items/go\u200c.md", FORBIDDEN),
    ("en", "items/a \u200d.md", FORBIDDEN),
    ("en", "items/x\U000e0067.md", FORBIDDEN),  # a tag outside a flag
    ("en", "items/\U0001f3f4\U000e0067\U000e0062.md", FORBIDDEN),  # a flag never ended
    # a name starting with a combining mark: drawn on the "/" before it, or on nothing
    ("en", "items/\u0338b.md", FORBIDDEN),  # a long solidus overlay: "items/b.md"
    ("en", "items/\u0301.md", FORBIDDEN),  # marks alone
    ("en", "items/\u0301\u0302\u0303.md", FORBIDDEN),
    ("en", "\u0301/x.md", FORBIDDEN),  # a folder's name too
    ("en", "items/\u093f.md", FORBIDDEN),  # a vowel sign without its consonant
    ("en", "items/\u20dd.md", FORBIDDEN),  # an enclosing circle
    ("en", "items/\u05b0.md", FORBIDDEN),  # a Hebrew point
]
# Names with the same characters where they spell something: emoji, ideograph variants,
# keycaps, braille words, Persian's zero-width non-joiner, a family emoji.
SPELLED = [
    "\u2764\ufe0f notes.md",
    "\u845b\U000e0100\u57ce.md",
    "1\ufe0f\u20e3 first.md",
    "#\ufe0f\u20e3.md",
    "\u2813\u2811\u2807\u2807\u2815\u2800\u283a\u2815\u2817\u2807\u2819.md",
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467.md",
    "\u182e\u1823\u1829\u182d\u1823\u182f\u180b.md",
    "\u2615\ufe0f.md",
    "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f.md",  # England
    "\u182c\u1820\u1837\u180e\u1820.md",  # the Mongolian vowel separator
    "\u0600\u0661\u0662.md",  # the Arabic number sign
    "3\ufe0e.md",  # text style of a digit
    "\U0001f44d\U0001f3fd.md",  # a skin tone
    "\U0001f3f3\ufe0f\u200d\U0001f308.md",  # the rainbow flag
    "\u2139\ufe0f.md",
    "\u0dc1\u0dca\u200d\u0dbb\u0dd3.md",  # Sinhala with a joiner
]


def lay_traps(folder: Path, outside: Path, sibling: Path) -> None:
    """Symbolic links (out, dangling, looping, inner, to a prefix-sharing ``sibling``) and a
    FIFO inside ``folder``, which gets ``items/`` if it has none; ``outside`` exists."""
    (folder / "items").mkdir(parents=True, exist_ok=True)
    (folder / "link_out").symlink_to(outside)
    (folder / "file_link.md").symlink_to(outside / "secret.md")
    (folder / "dangling.md").symlink_to(outside / "missing.md")
    (folder / "loop1").symlink_to(folder / "loop2")
    (folder / "loop2").symlink_to(folder / "loop1")
    (folder / "inner_link").symlink_to(folder / "items")
    (folder / "prefix_link").symlink_to(sibling)
    os.mkfifo(folder / "pipe.md")
