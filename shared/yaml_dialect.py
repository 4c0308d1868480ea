"""The YAML of frontmatter: how a block's values are typed when read, and written.

Plain scalars are typed as YAML 1.2 (Obsidian's reading) types them, and only when the
value writes back as the same text; keys are strings, each once; U+0085, U+2028 and
U+2029 are ordinary characters, as in YAML 1.2; a date-time with digits past the
microseconds Python's datetime holds is its text. Values are written block-style, ISO
8601 datetimes with a ``T``, flat lists inline, a string any YAML reader would type
otherwise quoted, and one holding U+0085, U+2028 or U+2029 double-quoted with them
escaped. Kept apart from ``shared.frontmatter``, whose rules of a note's block
(protected keys, normalization, salvage) use it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

import yaml

from shared.errors import InvalidFrontmatterError
from shared.timestamps import format_timestamp

MAX_INT_DIGITS = 100  # str() of a huge int raises ValueError (and costs quadratic time)

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


# U+0085, U+2028 and U+2029 are line breaks to YAML 1.1 (PyYAML, libyaml) and ordinary
# characters to YAML 1.2 (Obsidian): read, 'a\x85b' became 'a b' and a break could end a
# comment or a key's line; written raw in single quotes, a 1.2 reader took the indentation
# after one for part of the value. They are read as 1.2 reads them (through stand-ins no
# text can hold) and written only as the escapes \N, \L, \P of a double-quoted value.
YAML11_BREAKS = "\x85\u2028\u2029"
_STAND_INS_FROM = 0xF0000  # Supplementary Private Use Area-A
_LONG_ESCAPE = re.compile(r"\\U([0-9A-Fa-f]{8})")


def _stand_ins(text: str) -> str:
    """Three characters neither in ``text`` nor written in it as a ``\\U`` escape."""
    taken = set(text) | {chr(int(code, 16)) for code in _LONG_ESCAPE.findall(text)}
    free = (chr(point) for point in range(_STAND_INS_FROM, 0x110000) if chr(point) not in taken)
    found = "".join(next(free, "") for _ in YAML11_BREAKS)
    if len(found) < len(YAML11_BREAKS):  # (only a text of more than 512 KiB can)
        raise InvalidFrontmatterError("the frontmatter holds too many private-use characters")
    return found


class StrictLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader that refuses duplicate and non-string keys, and reads U+0085, U+2028
    and U+2029 as YAML 1.2 does: each is given to the parser as a stand-in character
    that no text holds, and every scalar (keys too) is given back with the original."""

    def __init__(self, stream: str) -> None:
        self.hidden: dict[int, str] = {}
        if any(ch in stream for ch in YAML11_BREAKS):
            stand_ins = _stand_ins(stream)
            stream = stream.translate(str.maketrans(YAML11_BREAKS, stand_ins))
            self.hidden = {
                ord(stand_in): ch for stand_in, ch in zip(stand_ins, YAML11_BREAKS, strict=True)
            }
        super().__init__(stream)

    def restored(self, text: str) -> str:
        """``text`` as written (a scalar read with stand-ins)."""
        return text.translate(self.hidden) if self.hidden else text

    def construct_scalar(self, node: yaml.Node) -> Any:
        value = super().construct_scalar(node)
        return self.restored(value) if isinstance(value, str) else value


def _construct_mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
    loader.flatten_mapping(node)
    result: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise InvalidFrontmatterError(f"frontmatter key {key!r} is not a string")
        if key in result:
            raise InvalidFrontmatterError(f"frontmatter key {key!r} appears more than once")
        result[key] = loader.construct_object(value_node, deep=True)
    return result


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

# Plain scalars are typed as YAML 1.2 (Obsidian's reading) types them, and only when the
# value writes back as the same text: PyYAML's YAML 1.1 made `no` False, `10:30` 630,
# `010` 8 and `1.10` 1.1, and a normalized note was saved with those values. What 1.1
# and 1.2 readers take differently (`yes`, `on`, `010`, `0x1F`, `1_000`) or what would
# be written back otherwise (`+49`, `1.10`, `1e3`, `1e400`) stays the text written, and
# is saved quoted (``NoteDumper``). Plain scalars resolve to tags of this module's own,
# so that an explicit ``!!int``/``!!float``/``!!bool`` keeps PyYAML's meaning.
_RETYPED = ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
# YAML 1.1's `=` (a "value" no constructor builds: the block was unreadable) and `<<` (a
# merge key, with aliases refused anyway) are plain text as YAML 1.2 reads them.
_DROPPED = (*_RETYPED, "tag:yaml.org,2002:value", "tag:yaml.org,2002:merge")
_PLAIN_BOOL = "tag:vault-memory,2026:plain-bool"
_PLAIN_INT = "tag:vault-memory,2026:plain-int"
_PLAIN_FLOAT = "tag:vault-memory,2026:plain-float"
_BOOL_TEXT = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT_TEXT = re.compile(r"^[-+]?[0-9]+$")
_FLOAT_TEXT = re.compile(
    r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"
    r"|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$"
)
_NUMBER_STARTS = list("-+.0123456789")
StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _DROPPED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
StrictLoader.add_implicit_resolver(_PLAIN_BOOL, _BOOL_TEXT, list("tTfF"))
StrictLoader.add_implicit_resolver(_PLAIN_INT, _INT_TEXT, list("-+0123456789"))
StrictLoader.add_implicit_resolver(_PLAIN_FLOAT, _FLOAT_TEXT, _NUMBER_STARTS)


def _construct_plain_bool(loader: Any, node: yaml.ScalarNode) -> bool:
    return bool(loader.construct_scalar(node).lower() == "true")


def _construct_plain_int(loader: Any, node: yaml.ScalarNode) -> int | str:
    """A decimal integer written as Python writes it; else the text (``+49``, ``010``)."""
    text: str = loader.construct_scalar(node)
    if text.startswith("+") or (text.lstrip("-").startswith("0") and text not in ("0",)):
        return text
    if len(text) > MAX_INT_DIGITS + 1:
        raise InvalidFrontmatterError(
            f"frontmatter integers may have at most {MAX_INT_DIGITS} digits"
        )
    return int(text)


def _construct_plain_float(loader: Any, node: yaml.ScalarNode) -> float | str:
    """A float that writes back as written (``2.5``); else the text (``1.10``, ``1e3``,
    ``1e400``, ``.inf``, ``.nan``: JSON has no number for those, and a person's
    ``max: .inf`` made the whole block unreadable)."""
    text: str = loader.construct_scalar(node)
    value: float = yaml.constructor.SafeConstructor.construct_yaml_float(loader, node)
    return value if math.isfinite(value) and _float_text(value) == text else text


def _float_text(value: float) -> str:
    """A finite float as PyYAML's dumper writes it."""
    written = repr(value).lower()
    return written.replace("e", ".0e", 1) if "." not in written and "e" in written else written


def _construct_timestamp(loader: Any, node: yaml.ScalarNode) -> date | str:
    """A date or datetime; the text when its fraction of a second has digits past the
    microseconds that Python's datetime holds (``10:30:00.123456789Z``), which PyYAML
    cut off, and when it is no day or time there is (``2023-02-30``, ``0000-01-01``,
    ``+25:00``): YAML 1.2 (Obsidian) has no date type, so a typo in one value is that
    value's text, not a block no one can read."""
    match = loader.timestamp_regexp.match(node.value)
    fraction = match["fraction"] if match else None
    text: str = loader.construct_scalar(node)
    if fraction and fraction[6:].strip("0"):
        return text
    try:
        moment: date = yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except (ValueError, OverflowError):
        return text
    return moment


def parse_events(text: str) -> Iterator[yaml.Event]:
    """``yaml.parse`` with ``StrictLoader``, each scalar's value as written."""
    loader = StrictLoader(text)
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.ScalarEvent):
                event.value = loader.restored(event.value)
            yield event
    finally:
        loader.dispose()


def compose(text: str) -> yaml.Node | None:
    """``yaml.compose`` with ``StrictLoader``, each scalar's value (keys too) as written:
    the nodes hold the stand-ins of U+0085, U+2028 and U+2029 otherwise."""
    loader = StrictLoader(text)
    try:
        root: yaml.Node | None = loader.get_single_node()
    finally:
        loader.dispose()
    seen: set[int] = set()
    stack = [root] if root is not None else []
    while stack:  # (an alias may make the same node appear twice, or a cycle)
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            node.value = loader.restored(node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
    return root


StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
StrictLoader.add_constructor(_PLAIN_BOOL, _construct_plain_bool)
StrictLoader.add_constructor(_PLAIN_INT, _construct_plain_int)
StrictLoader.add_constructor(_PLAIN_FLOAT, _construct_plain_float)


def scalar_text(value: Any) -> str:
    """A frontmatter value as text, spelled as it is written in YAML (``true``, not
    ``True``; ``1.0e+16``): a title, type or tag that YAML typed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value):
        return _float_text(value)
    if isinstance(value, date):  # (a daily note's title: `title: 2024-05-01`)
        return value.isoformat()
    return str(value)


class NoteDumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Block-style dumper: ISO 8601 datetimes with a ``T``, flat lists inline, no anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class PlainNoteDumper(yaml.SafeDumper):
    """``NoteDumper`` in Python: libyaml writes every character past U+FFFF (emoji, CJK
    Extension B, as in 𠮷野家) as a ``\\U`` escape, even with ``allow_unicode``; this
    one writes them as they are (used when libyaml escaped one)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_datetime(dumper: Any, value: datetime) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", format_timestamp(value))


def _represent_str(dumper: Any, value: str) -> yaml.ScalarNode:
    """Double-quoted when it holds a YAML 1.1 line break (written ``\\N``, ``\\L``, ``\\P``)."""
    style = '"' if any(ch in value for ch in YAML11_BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_list(dumper: Any, value: list[Any]) -> yaml.SequenceNode:
    flat = all(not isinstance(item, dict | list) for item in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flat)


for _dumper in (NoteDumper, PlainNoteDumper):
    _dumper.add_representer(datetime, _represent_datetime)
    _dumper.add_representer(list, _represent_list)
    _dumper.add_representer(str, _represent_str)
    # A string a YAML 1.1 or 1.2 reader would take for a number or a boolean is quoted:
    # the dumper quotes what its resolvers type; YAML 1.1's miss `09`, `1e3`, `0o17`.
    _dumper.add_implicit_resolver("tag:yaml.org,2002:int", _INT_TEXT, list("-+0123456789"))
    _dumper.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_TEXT, _NUMBER_STARTS)
    _dumper.add_implicit_resolver(
        "tag:yaml.org,2002:int", re.compile(r"^0o[0-7]+$|^0x[0-9a-fA-F]+$"), ["0"]
    )
