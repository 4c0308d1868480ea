"""Recall (seed 004's Active Memory Set): one bounded block of what an agent should know.

Three layers, printed in this order, as in H2-AMS:

- **resident**: ``USER.md`` and ``PROJECT.md`` (what maintenance distils), then folder
  abstracts (``.overview.md``, written by directory summaries): the root's, the folders
  on the way to ``path``, and the folders of the best on-demand hits;
- **recent**: the most recently changed notes (a day file of events shows its end);
- **on demand**: notes matching any keyword of the query (``keywords``), best first,
  each quoted from its first paragraph that holds a keyword (``recall_focus``).

This module finds the candidates; ``recall_source`` reads what each quotes of its note,
and ``recall_block`` shares the budget out and writes the block. The block says it is
reference data: every line taken from a note is quoted (``> ``), so a note can never
pose as the block's own framing, and anything that looks like the block's delimiter is
defused.
"""

from __future__ import annotations

import logging
import stat
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from indexer.index.hebrew_prefixes import without_particle
from indexer.index.text import as_read
from indexer.jobs.korean_spacing import spaced_spellings
from indexer.jobs.recall_block import (
    CLOSE,
    INTRO,
    ON_DEMAND_NOTES,
    OPEN,
    RECENT_NOTES,
    SHARES,
    SHORT_INTRO,
    SHORT_INTRO_BELOW,
    _quote,
    compose,
)
from indexer.jobs.recall_focus import from_focus as _from_focus
from indexer.jobs.recall_source import Source, known
from indexer.jobs.tokens import estimate_tokens
from indexer.jobs.word_stems import looked_up_all
from indexer.vault import fsops
from shared.body_title import title_from_body
from shared.errors import InvalidArgumentError, NotFoundError
from shared.frontmatter_reader import read_frontmatter
from shared.langs import check_lang
from shared.models import MAX_RECALL_BUDGET, MIN_RECALL_BUDGET
from shared.utf8 import check_text, whole_characters

if TYPE_CHECKING:
    from indexer.index.service import NoteIndex
    from indexer.vault.vault import Vault

__all__ = ["CLOSE", "OPEN", "SHARES", "Recall", "Source", "_from_focus", "_quote"]

log = logging.getLogger("indexer.jobs.recall")

MAX_QUERY_BYTES = 10 * 1024
RESIDENT_FILES = ("USER.md", "PROJECT.md")
OVERVIEW = ".overview.md"
MAX_ABSTRACTS = 5
HIT_FOLDERS = 3  # abstracts of the folders of this many best hits


def lines_shown(budget_tokens: int) -> int:
    """The lines of a note a block of ``budget_tokens`` could show (``MAX_QUOTED_LINES``
    for the largest budget): no line past them is split."""
    return 4 * budget_tokens // 2 + 2


def _is_events(row: dict) -> bool:
    """A day file of events (``events/YYYY/MM/DD.md``, or a note of type ``events``)."""
    return row.get("type") == "events" or str(row["path"]).startswith("events/")


class Recall:
    """Builds recall blocks from a workspace's vaults and its index."""

    def __init__(self, vault: Vault, index: NoteIndex | None, *, abstracts: bool = True) -> None:
        """``abstracts``: quote folder summaries (off with the summaries job: the ones
        an earlier run left are kept by no one and drift out of date)."""
        self.vault = vault
        self.index = index
        self.abstracts = abstracts

    def recall(self, lang: str, query: str, budget_tokens: int = 1500, path: str = "") -> dict:
        """``{block, tokens, sources: [{path, layer, tokens}], partial}`` within
        ``budget_tokens``; ``partial`` as search says it: the index may miss changes on
        disk (it is being built or catching up), so the block may miss notes."""
        check_lang(lang)
        _check_arguments(query, budget_tokens)
        folder = self._folder(lang, path)
        root = self.vault.sandbox.vault_root(lang)
        partial = self.index is not None and self.index.partial
        empty: dict[str, Any] = {"block": "", "tokens": 0, "sources": [], "partial": partial}
        if root is None:
            return empty
        # (imported here: its word tables and patterns were a fifth of our modules'
        # import at every start; ``indexer.daemon`` loads it in the background once serving)
        from indexer.jobs.keywords import extract_keywords, query_words
        from indexer.jobs.typed_words import typed_words

        keywords = extract_keywords(query)
        looked_up = looked_up_all(lang, keywords)  # (a word's start where endings change)
        looked_up = self._bare_where_unfound(lang, looked_up)
        hits = self._hits(lang, looked_up, folder)
        matched = {h["path"] for h in hits[:ON_DEMAND_NOTES]}
        lines = lines_shown(budget_tokens)
        candidates = {
            "resident": self._resident(str(root), folder, hits, lines),
            # a recent note the query matches is quoted where it matches (on demand)
            "recent": [s for s in self._recent(lang, folder, lines) if s.path not in matched],
            "on_demand": [
                Source(
                    h["path"],
                    h["title"],
                    h["body"],
                    focus=tuple(word.removesuffix("*") for word in looked_up),
                    lines=lines,
                    events=_is_events(h),
                )
                for h in hits
            ],
        }
        intro = INTRO if budget_tokens >= SHORT_INTRO_BELOW else SHORT_INTRO
        heading_words = typed_words(query, query_words(keywords))  # (as the user typed them)
        room = budget_tokens
        for _ in range(3):  # (once: the layers' sums are the block's; a guard against a slip)
            sections, sources = compose(candidates, room, heading_words, intro)
            if not sources:
                return empty
            block = f"{OPEN}\n{intro}\n{sections}{CLOSE}"
            tokens = estimate_tokens(block)
            if tokens <= budget_tokens:
                return {"block": block, "tokens": tokens, "sources": sources, "partial": partial}
            log.warning("recall: a block of %d tokens for a budget of %d", tokens, room)
            room -= tokens - budget_tokens
        return empty

    def _folder(self, lang: str, path: str) -> str:
        """``path`` as a folder of the vault, refused as ``summary`` refuses it: a path
        that names nothing or names a file narrowed the block to nothing, and the caller
        never heard why (the vault root of a vault not made yet is an empty block)."""
        target = self.vault.sandbox.resolve(lang, path, allow_root=True)
        if not target.rel:
            return ""
        with self.vault.sandbox.open(target) as place:
            info = place.lstat()
        if info is None:
            raise NotFoundError(f"{target.rel} does not exist")
        if not stat.S_ISDIR(info.st_mode):
            raise InvalidArgumentError(f"{target.rel} is a file; recall takes a folder")
        return target.rel

    # -- candidates ----------------------------------------------------------------------

    def _bare_where_unfound(self, lang: str, keywords: list[str]) -> list[str]:
        """A Hebrew keyword with a one-letter word joined before it (``לדנה``, to Dana)
        that no note holds as written is sought bare (``דנה``): ``מה אמרתי לדנה?``
        found nothing. Only then: the letter may be the word's own (``מספר``, number).
        A Korean compound written joined that no note holds is sought as the first of
        its two words apart that a note holds (``korean_spacing``: ``부산여행``)."""
        if self.index is None:
            return keywords
        sought = []
        for keyword in keywords:
            bare = without_particle(keyword)
            apart = spaced_spellings(keyword) if bare is None else []
            if (bare is not None or apart) and not self.index.search_any(lang, [keyword], 1):
                held = (p for p in apart if self.index.search_any(lang, [p], 1))
                keyword = bare if bare is not None else next(held, keyword)
            sought.append(keyword)
        return sought

    def _hits(self, lang: str, keywords: list[str], folder: str) -> list[dict]:
        if self.index is None or not keywords:
            return []
        return newest_copy_first(self.index.search_any(lang, keywords, ON_DEMAND_NOTES + 4, folder))

    def _recent(self, lang: str, folder: str, lines: int) -> list[Source]:
        if self.index is None:
            return []
        return [
            known(
                Source(
                    row["path"],
                    row["title"],
                    row["body"],
                    from_end=_is_events(row),
                    lines=lines,
                    events=_is_events(row),
                )
            )
            for row in self.index.recent(lang, RECENT_NOTES + 4, folder)
        ]

    def _resident(self, root: str, folder: str, hits: list[dict], lines: int) -> list[Source]:
        """USER.md, PROJECT.md, then the abstracts of the relevant folders (those made
        without a model, counts alone, as one header line each: ``compact``)."""
        found: list[Source] = []
        for name in RESIDENT_FILES:
            text = self._read(root, name)
            if text is not None:
                meta, body = read_frontmatter(text)
                title = meta.get("title")
                if not isinstance(title, str) or not title.strip():
                    title = title_from_body(body) or name
                found.append(known(Source(name, title, body, lines=lines)))
        if not self.abstracts:
            return found
        folders = [""]
        parts = folder.split("/") if folder else []
        folders += ["/".join(parts[: i + 1]) for i in range(len(parts))]
        folders += [str(PurePosixPath(h["path"]).parent) for h in hits[:HIT_FOLDERS]]
        for name in list(dict.fromkeys("" if f == "." else f for f in folders))[:MAX_ABSTRACTS]:
            rel = f"{name}/{OVERVIEW}" if name else OVERVIEW
            text = self._read(root, rel)
            if text is None:
                continue
            meta = read_frontmatter(text)[0]
            abstract = meta.get("abstract")
            if not isinstance(abstract, str) or not abstract.strip():
                continue
            if meta.get("generated_by") == "fallback":  # counts alone: one header line
                found.append(known(Source(rel, abstract, "", compact=True)))
            else:
                title = f"abstract of folder {name or '/'}"
                found.append(known(Source(rel, title, abstract, lines=lines)))
        return found

    def _read(self, root: str, rel: str) -> str | None:
        """A file below the vault root, read by descriptors (dot-files included)."""
        got = fsops.read_under(root, rel, self.vault.max_file_bytes)
        if got is None:
            return None
        data, limit = got[0], self.vault.max_file_bytes
        return whole_characters(data[:limit], cut_after=len(data) > limit)


def newest_copy_first(hits: list[dict]) -> list[dict]:
    """``hits`` with the notes of one title in the order they were changed, newest first,
    in the places BM25 gave them: a short stale copy (``archive/Plan.md``) ranked above
    the live note it was copied from, as BM25 favours short notes, and recall quoted the
    old text first (or alone, in a small budget)."""
    places: dict[str, list[int]] = {}
    for at, hit in enumerate(hits):
        key = " ".join(as_read(hit["title"]).split())
        if key:
            places.setdefault(key, []).append(at)
    ordered = list(hits)
    for group in places.values():
        newest = sorted((hits[at] for at in group), key=lambda hit: -hit["changed_ns"])
        for at, hit in zip(group, newest, strict=True):
            ordered[at] = hit
    return ordered


def _check_arguments(query: object, budget_tokens: object) -> None:
    if not isinstance(query, str):
        raise InvalidArgumentError("query must be a string")
    if len(query.encode("utf-8", "surrogatepass")) > MAX_QUERY_BYTES:
        raise InvalidArgumentError(f"the query is longer than {MAX_QUERY_BYTES} bytes")
    check_text("query", query)
    if (
        not isinstance(budget_tokens, int)
        or isinstance(budget_tokens, bool)
        or not MIN_RECALL_BUDGET <= budget_tokens <= MAX_RECALL_BUDGET
    ):
        raise InvalidArgumentError(
            f"budget_tokens must be an integer from {MIN_RECALL_BUDGET} to {MAX_RECALL_BUDGET}"
        )
