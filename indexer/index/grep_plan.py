"""Grep acceleration: the literals every match of a pattern must contain, as an FTS5
query over the trigram table (a superset of the matching files is fine, a miss is not).

The regex is read with CPython's own parser, ``re._parser``: private, but it is Python's
grammar and rejects what it cannot read, where a parser of our own would be a second
regex grammar to keep right. So it is kept behind a guard: imported in a ``try``, and
checked at import on one pattern using every construct ``_sequence`` reads
(``PARSER_OK``). If a Python release drops or reshapes it, grep planning returns None
(every file is read: slower, never wrong) and tests/test_index_query.py fails saying so.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from indexer.index.text import fold
from shared.utf8 import utf8_problem

try:  # private CPython modules, see the module docstring
    import re._constants as sre_c
    import re._parser as sre_parse
except ImportError:  # PARSER_OK is then False
    pass

# A required-literal tree: ("lit", text) | ("and", [nodes]) | ("or", [nodes]); None
# stands for "no requirement known" (every file may match).
Node = tuple[str, Any] | None
MAX_TRIGRAMS_PER_LITERAL = 12
MAX_NODES = 48
# Constructs where Python's parser and RE2 disagree or Python would warn: give up.
_RISKY = ("[:", "[.", "[=", "[[", "--", "&&", "~~", "||")


@dataclass(frozen=True)
class GrepQuery:
    """``match``: an FTS5 expression over the folded-text trigram table that every file
    holding a match satisfies; ``literal``: one string every such file contains (the
    trigram table cannot tell adjacency, so candidates are checked for it), or None."""

    match: str
    literal: str | None


def grep_trigram_match(pattern: str, fixed: bool) -> GrepQuery | None:
    """What the index can prove about files matching a grep pattern (a superset is fine,
    a miss is not), or None when no literal of 3+ characters is provably required.

    The regex is read with Python's ``re`` parser, conservatively: anything it might
    read differently from RE2 gives None, and so does any parse error, or a parser that
    fails the check of ``PARSER_OK``.
    """
    if utf8_problem(pattern) is not None:
        return None  # (a lone surrogate: no UTF-8 text holds it, nor can SQLite bind it)
    if fixed:
        node = _literal_node(pattern)
    else:
        if not PARSER_OK or ("[" in pattern and any(risky in pattern for risky in _RISKY)):
            return None
        try:
            node = _sequence(sre_parse.parse(pattern))
        except Exception:  # any doubt means "scan everything"
            return None
    match = _to_fts(node)
    if match is None or node is None:
        return None
    return GrepQuery(match, _longest_required(node))


def _longest_required(node: Node) -> str | None:
    if node is None or node[0] == "or":
        return None
    if node[0] == "lit":
        return str(node[1])
    literals = [str(child[1]) for child in node[1] if child is not None and child[0] == "lit"]
    return max(literals, key=len) if literals else None


def _literal_node(text: str) -> Node:
    """A literal must appear; lines never hold CR/LF, so those split it."""
    pieces = [p for p in re.split(r"[\r\n]", text) if len(fold(p)) >= 3]
    return _and([("lit", p) for p in pieces])


def _sequence(items: Any) -> Node:
    parts: list[Node] = []
    run: list[str] = []
    for op, av in items:
        if op is sre_c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            parts.append(_literal_node("".join(run)))
            run = []
        if op is sre_c.SUBPATTERN:
            parts.append(_sequence(av[3]))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
            if av[0] >= 1:
                parts.append(_sequence(av[2]))
        elif op is sre_c.BRANCH:
            parts.append(_or([_sequence(alt) for alt in av[1]]))
        elif op is sre_c.ATOMIC_GROUP:
            parts.append(_sequence(av))
    if run:
        parts.append(_literal_node("".join(run)))
    return _and(parts)


def _and(parts: list[Node]) -> Node:
    kept = [p for p in parts if p is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else ("and", kept[:MAX_NODES])


def _or(parts: list[Node]) -> Node:
    if not parts or any(p is None for p in parts) or len(parts) > MAX_NODES:
        return None
    return parts[0] if len(parts) == 1 else ("or", parts)


def _to_fts(node: Node) -> str | None:
    if node is None:
        return None
    kind, value = node
    if kind == "lit":
        grams = _trigrams(fold(value))
        return " AND ".join(grams) if grams else None
    children = [_to_fts(child) for child in value]
    if kind == "or":
        if any(c is None for c in children):
            return None
        return "(" + " OR ".join(f"({c})" for c in children if c) + ")"
    kept = [f"({c})" for c in children if c]
    return " AND ".join(kept) if kept else None


def _trigrams(text: str) -> list[str]:
    """Up to MAX_TRIGRAMS_PER_LITERAL quoted trigrams spread over ``text``."""
    grams = [text[i : i + 3] for i in range(len(text) - 2)]
    grams = [g for g in dict.fromkeys(grams) if "\x00" not in g]
    if len(grams) > MAX_TRIGRAMS_PER_LITERAL:
        step = (len(grams) - 1) / (MAX_TRIGRAMS_PER_LITERAL - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS_PER_LITERAL)]
    return ['"' + g.replace('"', '""') + '"' for g in grams]


# One pattern with every construct ``_sequence`` reads (literal runs, a class, groups,
# alternation, lazy, greedy, possessive and counted repeats, an atomic group) and the
# literals it must give; [xy] and "." cut runs, "ab" and "r" are too short to count.
_PROBE = "ab[xy](cde)(?:fgh|ijk)+?(lmn)*(?>opq)r.(?:stu)++(?:vwx){2}"
_PROBE_NODE = (
    "and",
    [
        ("lit", "cde"),
        ("or", [("lit", "fgh"), ("lit", "ijk")]),
        ("lit", "opq"),
        ("lit", "stu"),
        ("lit", "vwx"),
    ],
)


def _parser_reads_as_expected() -> bool:
    """Whether ``re._parser`` exists and still has the shape ``_sequence`` reads."""
    try:
        return _sequence(sre_parse.parse(_PROBE)) == _PROBE_NODE
    except Exception:
        return False


PARSER_OK = _parser_reads_as_expected()
if not PARSER_OK:
    logging.getLogger("indexer").warning(
        "re._parser of this Python is missing or changed: grep reads every file"
    )
