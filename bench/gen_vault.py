"""A deterministic synthetic vault for the benchmarks (not a test).

``python -m bench.gen_vault --workspace W --notes N [--seed S] [--lang en]`` writes N
notes below ``W/memory/languages/<lang>/vault``: YAML frontmatter, 300-3000 characters
of body with wikilinks, about 15 % of the notes in Chinese or Japanese and 5 % in Thai
(made-up words of real Thai syllables, no spaces inside a phrase), nested folders
(``items/<a>/<b>/`` and ``events/YYYY/MM/``). Same N and seed, same bytes. A marker
file ``W/bench-vault.json`` lets a second run with the same parameters reuse the vault.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from pathlib import Path

_SYLLABLES = (
    "ka ri mo ta ne lu so vi pe an or el um ix ra do ne ba tu zo li ma ko se fi ga hu "
    "en al co de ly ter son ver pro mis nat ion ble ment"
).split()
_COMMON = (
    "the of and to in is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when if "
    "so no will can more about said up out what some time could them other into than only "
    "grammar verb past tense memory note learn practice example word meaning sentence"
).split()
_TAGS = [f"topic-{i}" for i in range(40)] + ["grammar", "verbs", "kanji", "travel", "work"]
# Common characters; CJK "words" are random 2-4 character strings over these pools.
_HAN = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过"
    "家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本"
    "见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己"
)
_KANA = "のはがをにでとももへやかなしたてりるれいうえおあきくけこさすせそちつ"
_PUNCT_ZH = "，。、"
# Thai syllables: a pattern (C consonant, T tone mark or none, F final) filled in at random.
_TH_CONSONANTS = "กขคงจชซดตทนบปผพฟมยรลวสหอ"
_TH_OPEN = ("CTา", "CีT", "CืT", "CูT", "เCT", "แCT", "โCT", "ไCT", "CTำ", "เCTา", "CTอ")
_TH_CLOSED = ("CัTF", "CTาF", "CิTF", "CีTF", "CุTF", "เCTF", "โCTF", "CTF")
_TH_TONES = ("", "", "่", "้")
_TH_FINALS = "กงนมยดบ"
_PUNCT_JA = "、。"


class _Words:
    """Zipf-distributed word pools (English-like, Chinese, Japanese, Thai)."""

    def __init__(self, rng: random.Random) -> None:
        made = {"".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4))) for _ in range(30000)}
        self.english = _COMMON + sorted(made - set(_COMMON))
        self.zh = sorted({"".join(rng.choices(_HAN, k=rng.randint(2, 4))) for _ in range(6000)})
        rng.shuffle(self.zh)
        self.ja = sorted(
            {
                "".join(rng.choices(_HAN, k=rng.randint(1, 2)))
                + "".join(rng.choices(_KANA, k=rng.randint(0, 2)))
                for _ in range(6000)
            }
        )
        rng.shuffle(self.ja)
        self.th = sorted(
            {"".join(_thai_syllable(rng) for _ in range(rng.randint(1, 3))) for _ in range(6000)}
        )
        rng.shuffle(self.th)
        self.pools = {"en": self.english, "zh": self.zh, "ja": self.ja, "th": self.th}
        self.cum = {
            name: list(accumulate(1.0 / (rank + 1) for rank in range(len(pool))))
            for name, pool in self.pools.items()
        }

    def pick(self, rng: random.Random, pool: str, k: int) -> list[str]:
        return rng.choices(self.pools[pool], cum_weights=self.cum[pool], k=k)


def _thai_syllable(rng: random.Random) -> str:
    pattern = rng.choice(_TH_OPEN if rng.random() < 0.5 else _TH_CLOSED)
    return (
        pattern.replace("C", rng.choice(_TH_CONSONANTS))
        .replace("T", rng.choice(_TH_TONES))
        .replace("F", rng.choice(_TH_FINALS))
    )


def _body(rng: random.Random, words: _Words, script: str, size: int, slugs: list[str]) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        if script == "en":
            sentence = " ".join(words.pick(rng, "en", rng.randint(6, 18)))
            piece = sentence[0].upper() + sentence[1:] + ". "
        elif script == "th":  # words run together, a space ends each phrase
            piece = "".join(words.pick(rng, "th", rng.randint(2, 6))) + " "
        else:
            punct = _PUNCT_ZH if script == "zh" else _PUNCT_JA
            chunks = words.pick(rng, script, rng.randint(4, 12))
            piece = "".join(c + (rng.choice(punct) if rng.random() < 0.2 else "") for c in chunks)
            piece += "。"
        if slugs and rng.random() < 0.15:
            piece += f"See [[{rng.choice(slugs)}]]. "
        if rng.random() < 0.1:
            piece += "\n\n"
        parts.append(piece)
        length += len(piece)
    return "".join(parts)[:size].rstrip() + "\n"


def generate(workspace: Path, notes: int, seed: int = 42, lang: str = "en") -> Path:
    """Write the vault (or reuse it when the marker matches); returns the vault folder."""
    vault = workspace / "memory" / "languages" / lang / "vault"
    marker = workspace / "bench-vault.json"
    wanted = {"notes": notes, "seed": seed, "lang": lang, "version": 2}
    if marker.exists() and json.loads(marker.read_text()) == wanted and vault.is_dir():
        return vault
    if vault.exists():
        shutil.rmtree(vault)
    rng = random.Random(seed)
    words = _Words(rng)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    slugs: list[str] = []
    for number in range(notes):
        roll = rng.random()
        script = "zh" if roll < 0.08 else "ja" if roll < 0.15 else "th" if roll < 0.2 else "en"
        title_words = words.pick(rng, script, rng.randint(2, 5))
        title = (" " if script == "en" else "").join(title_words)
        slug = f"n{number:06d}-{'-'.join(words.pick(rng, 'en', 2))}"
        created = start + timedelta(minutes=number * 7)
        if rng.random() < 0.1:
            folder = f"events/{created:%Y}/{created:%m}"
            kind = "events"
        else:
            folder = f"items/{rng.randrange(25):02d}/{rng.randrange(12):02d}"
            kind = rng.choice(("item", "item", "item", "summary"))
        tags = sorted(set(rng.sample(_TAGS, rng.randint(1, 4))))
        body = _body(rng, words, script, rng.randint(300, 3000), slugs[-500:])
        text = (
            f"---\nid: B{number:08d}\ntitle: {json.dumps(title, ensure_ascii=False)}\n"
            f"type: {kind}\ntags: [{', '.join(tags)}]\n"
            f"created: {created:%Y-%m-%dT%H:%M:%SZ}\nupdated: {created:%Y-%m-%dT%H:%M:%SZ}\n"
            f"---\n# {title}\n\n{body}"
        )
        path = vault / folder / f"{slug}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        slugs.append(slug)
    marker.write_text(json.dumps(wanted))
    return vault


def vault_bytes(vault: Path) -> int:
    total = 0
    for folder, _, files in os.walk(vault):
        total += sum(os.stat(os.path.join(folder, f)).st_size for f in files)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--lang", default="en")
    args = parser.parse_args()
    vault = generate(args.workspace, args.notes, args.seed, args.lang)
    print(f"{args.notes} notes, {vault_bytes(vault) / 1e6:.1f} MB in {vault}")


if __name__ == "__main__":
    main()
