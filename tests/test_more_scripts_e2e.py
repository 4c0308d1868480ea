"""End to end: search, grep, find and recall through a real ``indexer serve`` on vaults in
scripts no earlier test wrote: Georgian with its Mtavruli capitals, Armenian with ``և``
and ``ﬓ``, Amharic, Tamil, Bengali, Telugu, Kannada, Malayalam, Sinhala, Tibetan (syllables
between tshegs, no spaces), traditional Mongolian (variation selectors, the narrow
no-break space before a suffix, the vowel separator), Cherokee in either case, Korean
saved decomposed (NFD), emoji sequences in text and tags.

The notes are written as their readers write (words the writer knows; a native reader
may word them better). Each query's expected notes and highlighted word are what such a
reader expects, not what the index happens to do.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from fastmcp import Client
from helpers.indexer_process import RunningIndexer, start_indexer

ZWJ = "\u200d"
NNBSP = "\u202f"


def _mtavruli(word: str) -> str:
    return word.upper()  # (Georgian Mkhedruli's capitals: Mtavruli, U+1C90..)


NOTES: dict[str, dict[str, str]] = {
    "ka": {
        "travel/tbilisi.md": "---\ntitle: თბილისი\ntags: [მოგზაურობა, ღვინო]\n---\n"
        "თბილისი საქართველოს დედაქალაქია. ვახშამზე ვჭამეთ ხაჭაპური და ხინკალი,"
        " დავლიეთ ქართული ღვინო.\n",
        "notes/poster.md": f"# {_mtavruli('საქართველო')}\n\nპლაკატზე ეწერა"
        f" {_mtavruli('გამარჯობა')} და {_mtavruli('თბილისი')}.\n#{_mtavruli('მოგზაურობა')}\n",
    },
    "hy": {
        "city/yerevan.md": "---\ntitle: Երևան\n---\nԵրևանը Հայաստանի մայրաքաղաքն է։"
        " Ես ուզում եմ ﬓալ այստեղ մի քանի օր։\n",
        "city/reform.md": "# Երեւան\n\nԵրեւանում սուրճ խմեցինք։\n",
    },
    "am": {
        "food/coffee.md": "---\ntitle: ቡና\ntags: [ምግብ]\n---\nኢትዮጵያ የቡና መገኛ ናት።"
        " በአዲስ አበባ ቡና ሥነ ሥርዓት ይደረጋል።\n",
        "old/fidel.md": "# ጥንታዊ ጽሑፍ\n\nኢትዮጵያ፡ሀገረ፡ቡና፡ናት።\n",  # (words between ፡)
    },
    "ta": {"lang/tamil.md": "# தமிழ்\n\nதமிழ் ஒரு பழமையான மொழி. நான் ஒரு புத்தகம் படித்தேன்.\n"},
    "bn": {
        "lang/bangla.md": "---\ntitle: বাংলা\ntags: [উৎসব]\n---\nঢাকা বাংলাদেশের রাজধানী।"
        " পহেলা বৈশাখ একটি বড় উৎসব।\n",
        "lang/old.md": f"# পুরনো লেখা\n\nএই উত্{ZWJ}সব খুব সুন্দর।\n",  # (before Unicode 4.1)
    },
    "te": {"lang/telugu.md": "# తెలుగు\n\nహైదరాబాద్ తెలంగాణ రాజధాని. నేను ఒక పుస్తకం చదివాను.\n"},
    "kn": {"lang/kannada.md": "# ಕನ್ನಡ\n\nಬೆಂಗಳೂರು ರಾಜಧಾನಿ. ನಾನು ಒಂದು ಪುಸ್ತಕ ಓದಿದೆ.\n"},
    "ml": {"lang/malayalam.md": f"# മലയാളം\n\nഅവൻ ഇന്നലെ വന്നു. അവന്{ZWJ} പുസ്തകം വായിച്ചു.\n"},
    "si": {"lang/sinhala.md": f"# ලංකාව\n\nආයුබෝවන්! කොළඹ ශ්{ZWJ}රී ලංකාවේ විශාලතම නගරයයි.\n"},
    "bo": {"lang/tibetan.md": "# བོད་ཡིག\n\nབཀྲ་ཤིས་བདེ་ལེགས། ང་ལྷ་སར་འགྲོ་གི་ཡིན།\n"},
    "mn": {
        "lang/mongol.md": f"# ᠮᠣᠩᠭᠣᠯ\n\nᠮᠣᠩᠭᠣᠯ{NNBSP}ᠤᠨ ᠨᠡᠶᠢᠰᠯᠡᠯ ᠬᠣᠲᠠ ᠤᠯᠠᠭᠠᠨᠪᠠᠭᠠᠲᠤᠷ᠃"
        " ᠭᠠᠵᠠᠷ\u180eᠠ ᠮᠣᠩ\u180bᠭᠣᠯ\n"
    },
    "chr": {
        "lang/upper.md": "---\ntitle: ᏣᎳᎩ\ntags: [ᏣᎳᎩ]\n---\nᎣᏏᏲ! ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ. ᏩᏙ.\n",
        "lang/lower.md": "# ꮳꮃꭹ\n\nꭳꮟꮿ ꮳꮃꭹ ꭶꮼꮒꭿꮝꮧ. ꮹꮩ.\n#ꮳꮃꭹ\n",
    },
    "ko": {
        "nfd/korean.md": unicodedata.normalize(
            "NFD", "---\ntitle: 한국어 공부\ntags: [한국어]\n---\n서울에서 김치찌개를 먹었어요.\n"
        ),
    },
    "en": {
        "life/family.md": "---\ntitle: Family trip\ntags: [🇯🇵, travel✈️, 🏳️‍🌈]\n---\n"
        "We went to Japan 🇯🇵 with the kids 👨‍👩‍👧‍👦 and saw a parade 🏳️‍🌈. #trip🚀\n",
        "life/mixed.md": "# Mixed\n\nMeeting in თბილისი with Ηλίας; chai चाय and ᏣᎳᎩ friends 😀.\n",
    },
}

# (lang, query, the notes a reader expects, the text marked in the first one's snippet)
SEARCHES = [
    ("ka", "თბილისი", ["notes/poster.md", "travel/tbilisi.md"], None),
    ("ka", "საქართველო", ["notes/poster.md"], "ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ"),  # Mtavruli found in lower case
    ("ka", "ᲒᲐᲛᲐᲠᲯᲝᲑᲐ", ["notes/poster.md"], "ᲒᲐᲛᲐᲠᲯᲝᲑᲐ"),
    ("ka", "ხაჭაპ*", ["travel/tbilisi.md"], "ხაჭაპური"),
    ("ka", '"ქართული ღვინო"', ["travel/tbilisi.md"], "ქართული ღვინო"),
    ("ka", "თბილისი -ხინკალი", ["notes/poster.md"], "ᲗᲑᲘᲚᲘᲡᲘ"),
    ("hy", "Երեւանում", ["city/reform.md"], "Երեւանում"),
    ("hy", "Երևան", ["city/reform.md", "city/yerevan.md"], None),  # (ligature or two letters)
    ("hy", "մնալ", ["city/yerevan.md"], "ﬓալ"),
    ("hy", "Երև*", ["city/reform.md", "city/yerevan.md"], None),
    ("am", "ቡና", ["food/coffee.md", "old/fidel.md"], None),
    ("am", "ሀገረ", ["old/fidel.md"], "ሀገረ"),  # (the old word space ፡ is a break)
    ("am", "ኢትዮ*", ["food/coffee.md", "old/fidel.md"], None),
    ("ta", "தமிழ்", ["lang/tamil.md"], "தமிழ்"),
    ("ta", "புத்த*", ["lang/tamil.md"], "புத்தகம்"),
    ("ta", '"பழமையான மொழி"', ["lang/tamil.md"], "பழமையான மொழி"),
    ("bn", "উৎসব", ["lang/bangla.md", "lang/old.md"], None),  # khanda ta, or ta virama ZWJ
    ("bn", f"উত্{ZWJ}সব", ["lang/bangla.md", "lang/old.md"], None),
    ("bn", "ঢাকা -উত্সব", [], None),
    ("te", "పుస్త*", ["lang/telugu.md"], "పుస్తకం"),
    ("kn", '"ಒಂದು ಪುಸ್ತಕ"', ["lang/kannada.md"], "ಒಂದು ಪುಸ್ತಕ"),
    ("ml", "അവൻ", ["lang/malayalam.md"], "അവൻ"),
    ("si", "ශ්රී", ["lang/sinhala.md"], f"ශ්{ZWJ}රී"),  # (typed without the ZWJ)
    ("si", "ලංකා*", ["lang/sinhala.md"], "ලංකාවේ"),
    ("bo", "བཀྲ་ཤིས", ["lang/tibetan.md"], "བཀྲ་ཤིས"),
    ("bo", "བཀྲ་ཤིས་བདེ་ལེགས", ["lang/tibetan.md"], "བཀྲ་ཤིས་བདེ་ལེགས"),
    ("bo", "བདེ་ལེགས་བཀྲ་ཤིས", [], None),  # (a phrase: syllables in their order)
    ("mn", "ᠮᠣᠩᠭᠣᠯ", ["lang/mongol.md"], "ᠮᠣᠩᠭᠣᠯ"),
    ("mn", "ᠤᠯᠠᠭ*", ["lang/mongol.md"], "ᠤᠯᠠᠭᠠᠨᠪᠠᠭᠠᠲᠤᠷ"),
    ("mn", "ᠭᠠᠵᠠᠷᠠ", ["lang/mongol.md"], "ᠭᠠᠵᠠᠷ\u180eᠠ"),  # (the vowel separator shows nothing)
    ("chr", "ᏣᎳᎩ", ["lang/lower.md", "lang/upper.md"], None),
    ("chr", "ꮹꮩ", ["lang/lower.md", "lang/upper.md"], None),
    ("chr", "ᎦᏬᏂ*", ["lang/lower.md", "lang/upper.md"], None),
    ("ko", "김치찌개", ["nfd/korean.md"], "김치찌개"),
    ("ko", "찌개", ["nfd/korean.md"], "찌개"),
    ("en", "kids", ["life/family.md"], "kids"),
    ("en", "trip", ["life/family.md"], "trip"),
    ("en", "Ηλιας", ["life/mixed.md"], "Ηλίας"),
    ("en", "ᏣᎳᎩ friends", ["life/mixed.md"], "ᏣᎳᎩ"),
]
# (lang, tag asked for, the notes it keeps)
TAGS = [
    ("ka", "ᲛᲝᲒᲖᲐᲣᲠᲝᲑᲐ", ["notes/poster.md", "travel/tbilisi.md"]),
    ("bn", f"উত্{ZWJ}সব", ["lang/bangla.md"]),
    ("chr", "ꮳꮃꭹ", ["lang/lower.md", "lang/upper.md"]),
    ("ko", "한국어", ["nfd/korean.md"]),
    ("en", "🇯🇵", ["life/family.md"]),
    ("en", "🏳‍🌈", ["life/family.md"]),  # (without its variation selector)
    ("en", "travel✈", ["life/family.md"]),
    ("en", "trip🚀", ["life/family.md"]),
    ("en", "trip", []),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    workspace = tmp_path_factory.mktemp("scripts") / "ws"
    for lang, notes in NOTES.items():
        for rel, text in notes.items():
            path = workspace / "memory" / "languages" / lang / "vault" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode())
    running = start_indexer(workspace)
    try:
        yield running
    finally:
        running.stop()


async def _call(client: Client, tool: str, **args) -> dict:
    return (await client.call_tool(tool, args)).structured_content


def _marked(snippet: str) -> list[str]:
    return snippet.replace("****", "**").split("**")[1::2]


async def test_searches_find_and_mark_what_a_reader_expects(served: RunningIndexer) -> None:
    wrong = []
    async with served.client() as client:
        for lang, query, expected, marked in SEARCHES:
            found = await _call(client, "search", lang=lang, query=query)
            paths = sorted(hit["path"] for hit in found["results"])
            if paths != expected:
                wrong.append((lang, query, paths, expected))
            elif marked is not None:
                first = next(h for h in found["results"] if h["path"] == expected[0])
                if marked not in _marked(first["snippet"]):
                    wrong.append((lang, query, first["snippet"], marked))
        for lang, tag, expected in TAGS:
            found = await _call(client, "search", lang=lang, query="", tags=[tag])
            paths = sorted(hit["path"] for hit in found["results"])
            if paths != expected:
                wrong.append((lang, tag, paths, expected))
    assert wrong == []


async def test_grep_find_and_recall_in_those_scripts(served: RunningIndexer) -> None:
    async with served.client() as client:

        async def grep(lang: str, pattern: str, **args) -> list[tuple[str, int]]:
            found = await _call(client, "grep", lang=lang, pattern=pattern, **args)
            return [(m["path"], m["line"]) for m in found["matches"]]

        # Mtavruli and Cherokee's two cases are one letter each to ignore_case
        assert await grep("ka", "ᲗᲑᲘᲚᲘᲡᲘ", ignore_case=True, fixed=True) == [
            ("notes/poster.md", 3),
            ("travel/tbilisi.md", 2),
            ("travel/tbilisi.md", 5),
        ]
        assert await grep("ka", "ᲗᲑᲘᲚᲘᲡᲘ", fixed=True) == [("notes/poster.md", 3)]
        cherokee = await grep("chr", "ꮳꮃꭹ", ignore_case=True)
        assert {path for path, _ in cherokee} == {"lang/lower.md", "lang/upper.md"}
        assert await grep("am", "ቡና[፡ ]") == [("food/coffee.md", 5), ("old/fidel.md", 3)]
        assert await grep("ta", "த[\\pL\\pM]+ம்\\b") == []  # (\b is ASCII's: documented)
        assert await grep("ta", "புத்த[\\pL\\pM]+") == [("lang/tamil.md", 3)]
        assert await grep("bo", "བཀྲ་ཤིས", fixed=True) == [("lang/tibetan.md", 3)]
        assert await grep("en", "🏳️‍🌈", fixed=True) == [("life/family.md", 3), ("life/family.md", 5)]
        assert await grep("en", "\\x{1F1EF}\\x{1F1F5}") == [
            ("life/family.md", 3),
            ("life/family.md", 5),
        ]
        found = await _call(client, "find", lang="bo", pattern="**/*.md")
        assert found["paths"] == ["lang/tibetan.md"]

        recalled = await _call(
            client, "recall", lang="ka", query="რა ვჭამეთ? ხაჭაპური", budget_tokens=300
        )
        assert recalled["tokens"] <= 300
        assert "travel/tbilisi.md" in [s["path"] for s in recalled["sources"]]
        recalled = await _call(client, "recall", lang="bn", query="উৎসব কবে?", budget_tokens=400)
        on_demand = {s["path"] for s in recalled["sources"] if s["layer"] == "on_demand"}
        assert on_demand == {"lang/bangla.md", "lang/old.md"}


def test_the_notes_are_as_written(served: RunningIndexer) -> None:
    """(The vaults hold the texts above byte for byte: no test reads a rewritten note.)"""
    for lang, notes in NOTES.items():
        for rel, text in notes.items():
            path: Path = served.workspace / "memory" / "languages" / lang / "vault" / rel
            assert path.read_bytes() == text.encode()


async def test_grep_reads_a_decomposed_note_as_its_composed_twin(served: RunningIndexer) -> None:
    """A note saved in NFD (Korean as macOS names and some of its programs write it:
    each syllable its jamo) is the same text as its NFC twin to a reader; search found it,
    grep (fixed or not, either case) did not, nor an NFD pattern (typed or pasted so) the
    NFC notes. The lines shown are the note's own, as an edit must quote them."""
    vault = served.workspace / "memory" / "languages" / "ko" / "vault"
    composed = "# 서울\n\n서울은 대한민국의 수도입니다. Café crème\n"
    (vault / "nfc").mkdir(exist_ok=True)
    (vault / "nfc" / "seoul.md").write_text(composed)
    decomposed = unicodedata.normalize("NFD", NOTES["ko"]["nfd/korean.md"])
    async with served.client() as client:

        async def grep(pattern: str, **args) -> list[tuple[str, int, str]]:
            for _ in range(100):  # (the watcher indexes the new note)
                found = await _call(client, "search", lang="ko", query="대한민국의")
                if found["results"]:
                    break
            found = await _call(client, "grep", lang="ko", pattern=pattern, **args)
            return [(m["path"], m["line"], m["text"]) for m in found["matches"]]

        nfd_line = decomposed.split("\n")[4]
        for args in (
            {"fixed": True},
            {},
            {"ignore_case": True},
            {"fixed": True, "ignore_case": True},
        ):
            assert await grep("김치찌개", **args) == [("nfd/korean.md", 5, nfd_line)], args
            assert await grep(unicodedata.normalize("NFD", "수도입니다"), **args) == [
                ("nfc/seoul.md", 3, composed.split("\n")[2])
            ], args
        assert await grep("서울[은에]") == [
            ("nfc/seoul.md", 3, composed.split("\n")[2]),
            ("nfd/korean.md", 5, nfd_line),
        ]
        assert await grep(unicodedata.normalize("NFD", "CAFÉ"), ignore_case=True) == [
            ("nfc/seoul.md", 3, composed.split("\n")[2])
        ]
