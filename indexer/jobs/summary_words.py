"""The fixed words of a folder summary made without a model, in a vault's language.

A model writes a summary in the vault's language (the prompt says so); the fallback said
"3 notes: ..." and "# Overview" in every vault but the Chinese ones. Its words are here
for the languages whose maintenance headings are (``maintenance_words``), in English
elsewhere; the Chinese are seed 001's, byte for byte (in traditional characters for
``zh-Hant``, ``zh-TW``, ``zh-HK`` vaults). Counts take each language's plural
forms ("1 note", "2 notes"; Russian "21 заметка", "22 заметки", "25 заметок"; Arabic's
six) or its counter (3 件, 3개, 3 条); a "more not listed" line is worded so that one
form fits every number where the language allows it. Categories are the notes' own
(``type``) and are not translated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shared.langs import language_of, writes_traditional_chinese


def _one_other(count: int) -> int:
    """English, German, Spanish, Italian, Dutch: singular for 1 only."""
    return 0 if count == 1 else 1


def _one_with_zero(count: int) -> int:
    """French and Portuguese: singular for 0 and 1."""
    return 0 if count in (0, 1) else 1


def _east_slavic(count: int) -> int:
    """Russian, Ukrainian: 1, 21 (one); 2-4, 22-24 (few); 0, 5-20, 25 (many)."""
    if count % 10 == 1 and count % 100 != 11:
        return 0
    if 2 <= count % 10 <= 4 and not 12 <= count % 100 <= 14:
        return 1
    return 2


def _polish(count: int) -> int:
    """Polish: 1 (one); 2-4, 22-24 (few); 0, 5-21, 25 (many: 21 notatek)."""
    if count == 1:
        return 0
    if 2 <= count % 10 <= 4 and not 12 <= count % 100 <= 14:
        return 1
    return 2


def _arabic(count: int) -> int:
    """Arabic: 0; 1; 2 (the dual); 3-10, 103-110 (plural); 11-99, 111 (singular after
    the number); 100-102 and the rest (singular)."""
    if count <= 2:
        return count
    if 3 <= count % 100 <= 10:
        return 3
    return 4 if 11 <= count % 100 <= 99 else 5


@dataclass(frozen=True, slots=True)
class SummaryWords:
    """One language's words; ``notes`` and ``more`` are formats of ``{n}`` by plural form
    (``rule`` picks it; a single format fits every number)."""

    title: str
    notes: tuple[str, ...]
    more: tuple[str, ...]
    rule: Callable[[int], int] = _one_other
    abstract: str = "{notes}: {names}"
    join: str = ", "
    count: str = "{n}"
    ellipsis: str = "…"

    def _form(self, forms: tuple[str, ...], count: int) -> str:
        return forms[min(self.rule(count), len(forms) - 1)].format(n=count)

    def abstract_text(self, count: int, names: list[str]) -> str:
        """The abstract: how many children, and their categories."""
        notes = self._form(self.notes, count)
        return self.abstract.format(notes=notes, names=self.join.join(names))

    def count_text(self, count: int) -> str:
        """A category heading's count, inside its parentheses."""
        return self.count.format(n=count)

    def more_text(self, count: int) -> str:
        """The line under a category for its ``count`` children that have none."""
        return self._form(self.more, count)


ENGLISH = SummaryWords("Overview", ("{n} note", "{n} notes"), ("({n} more not listed)",))

# A right-to-left language's list separator, then a right-to-left mark: without it two
# Latin categories and the comma between them are one left-to-right run (``project،
# meeting``), which a reader of Arabic, going from the right, reads ``meeting`` first.
# (A mark, not an isolate: readers drop the bidi isolates from abstracts, ``one_line``.)
_RTL_COMMA = "\u060c\u200f "
_RTL_LATIN_COMMA = ",\u200f "

# By ``language_of`` a vault id (``pt-BR``: ``pt``).
_WORDS = {
    "zh": SummaryWords(
        "目录内容概览",
        ("包含 {n} 条",),
        ("（另有 {n} 条未列出）",),
        abstract="{notes}{names}相关记忆",
        join="、",
        count="{n}条",
        ellipsis="...",
    ),
    "zh-Hant": SummaryWords(
        "目錄內容概覽",
        ("包含 {n} 條",),
        ("（另有 {n} 條未列出）",),
        abstract="{notes}{names}相關記憶",
        join="、",
        count="{n}條",
        ellipsis="...",
    ),
    "ja": SummaryWords(
        "概要",
        ("{n} 件のメモ",),
        ("（ほか {n} 件は一覧にありません）",),
        abstract="{notes}：{names}",
        join="、",
        count="{n} 件",
    ),
    "ko": SummaryWords("개요", ("메모 {n}개",), ("(목록에 없는 항목 {n}개)",), count="{n}개"),
    "fr": SummaryWords(
        "Vue d'ensemble",
        ("{n} note", "{n} notes"),
        ("({n} autre non listé)", "({n} autres non listés)"),
        rule=_one_with_zero,
        abstract="{notes} : {names}",
    ),
    "de": SummaryWords(
        "Übersicht",
        ("{n} Notiz", "{n} Notizen"),
        ("({n} weiterer Eintrag nicht aufgeführt)", "({n} weitere Einträge nicht aufgeführt)"),
    ),
    "es": SummaryWords("Vista general", ("{n} nota", "{n} notas"), ("({n} más sin listar)",)),
    "pt": SummaryWords(
        "Visão geral",
        ("{n} nota", "{n} notas"),
        ("(mais {n} não listado)", "(mais {n} não listados)"),
        rule=_one_with_zero,
    ),
    "it": SummaryWords(
        "Panoramica",
        ("{n} nota", "{n} note"),
        ("({n} altro non elencato)", "(altri {n} non elencati)"),
    ),
    "nl": SummaryWords("Overzicht", ("{n} notitie", "{n} notities"), ("(nog {n} niet vermeld)",)),
    "pl": SummaryWords(
        "Przegląd",
        ("{n} notatka", "{n} notatki", "{n} notatek"),
        ("(pominięto jeszcze {n})",),
        rule=_polish,
    ),
    "ru": SummaryWords(
        "Обзор",
        ("{n} заметка", "{n} заметки", "{n} заметок"),
        ("(ещё {n} не в списке)",),
        rule=_east_slavic,
    ),
    "uk": SummaryWords(
        "Огляд",
        ("{n} нотатка", "{n} нотатки", "{n} нотаток"),
        ("(ще {n} не в списку)",),
        rule=_east_slavic,
    ),
    "ar": SummaryWords(
        "نظرة عامة",
        ("لا ملاحظات", "ملاحظة واحدة", "ملاحظتان", "{n} ملاحظات", "{n} ملاحظة", "{n} ملاحظة"),
        ("(غير مدرج هنا: {n})",),
        rule=_arabic,
        join=_RTL_COMMA,
    ),
    "he": SummaryWords(
        "סקירה כללית", ("פתק אחד", "{n} פתקים"), ("(עוד {n} לא ברשימה)",), join=_RTL_LATIN_COMMA
    ),
    "fa": SummaryWords(
        "نمای کلی", ("{n} یادداشت",), ("({n} مورد دیگر فهرست نشده)",), join=_RTL_COMMA
    ),
    "tr": SummaryWords("Genel bakış", ("{n} not",), ("({n} tane daha listelenmedi)",)),
    "vi": SummaryWords("Tổng quan", ("{n} ghi chú",), ("(còn {n} mục chưa liệt kê)",)),
    "id": SummaryWords("Ikhtisar", ("{n} catatan",), ("({n} lainnya tidak dicantumkan)",)),
    "hi": SummaryWords("अवलोकन", ("{n} नोट",), ("(सूची से बाहर: {n})",)),
    "th": SummaryWords("ภาพรวม", ("{n} บันทึก",), ("(อีก {n} รายการไม่ได้แสดง)",)),
}


def summary_words(lang: str) -> SummaryWords:
    """The fallback's words in ``lang``'s vault (English where ``_WORDS`` has none;
    the seed's Chinese in traditional characters where the vault writes those)."""
    if writes_traditional_chinese(lang):
        return _WORDS["zh-Hant"]
    return _WORDS.get(language_of(lang), ENGLISH)
