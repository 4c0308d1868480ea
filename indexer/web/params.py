"""Reading a REST request's inputs strictly: query values, bodies, JSON fields, ETags.

Anything malformed is an ``InvalidArgumentError`` (400), like a bad tool argument; a
body over its cap is ``TooLargeError`` (413) before it is read to the end.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request

from indexer.vault.fsops import ANY, ETAG_LIST, WEAK
from indexer.web.http_errors import UnsupportedMediaTypeError
from shared.errors import InvalidArgumentError, TooLargeError
from shared.numerals import whole
from shared.utf8 import field_not_text

REQUIRED: Any = object()
OPTIONAL_STR: tuple[Any, Any] = (str, None)
JSON_CAP_EXTRA = 64 * 1024  # a JSON body of arguments: room for the JSON around them
NOT_UTF8_ESCAPES = "is not valid UTF-8 once its %-escapes are decoded"
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
JSON_TYPES = frozenset({"application/json"})


def is_text_type(kind: str) -> bool:
    """Any ``text/...`` media type: a note or text file sent as it is (``text/csv`` for a
    ``.csv``). None is a form's but ``text/plain``, which is one of them anyway."""
    return kind.startswith("text/") and len(kind) > len("text/")


Version = int | str


_UTF8_CHARSETS = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})


def media_type(request: Request) -> str:
    """The body's media type without parameters, lower case ('' when absent); a body
    declared in a charset other than UTF-8 is refused (415): it was read as UTF-8, and a
    UTF-16 text was stored as its bytes, NULs and all."""
    kind, _, parameters = request.headers.get("content-type", "").partition(";")
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        charset = value.strip().strip('"').lower()
        if name.strip().lower() == "charset" and charset not in _UTF8_CHARSETS:
            raise UnsupportedMediaTypeError(
                f"the body is declared as {value.strip()[:40]!r}: send it as UTF-8"
                " (charset=utf-8, or no charset)"
            )
    return kind.strip().lower()


def check_url_path(request: Request) -> None:
    """Refuse a URL path whose %-escapes do not decode as UTF-8: the server decodes them
    to U+FFFD, so a write would name another file than the one asked for."""
    _check_escapes(request.scope.get("raw_path") or b"", "the URL path")


def check_query_string(request: Request) -> None:
    """Refuse a query string whose %-escapes do not decode as UTF-8 (``%ED%A0%80``, a lone
    surrogate, among them), naming the parameter: Starlette decodes them to U+FFFD, so a
    search or a path in a query would be another than the one sent."""
    raw = request.scope.get("query_string") or b""
    if _decodes(raw):
        return
    for pair in raw.split(b"&"):
        name, _, value = pair.partition(b"=")
        if not _decodes(name):
            raise InvalidArgumentError(f"a query parameter's name {NOT_UTF8_ESCAPES}")
        if not _decodes(value):
            shown = urllib.parse.unquote_plus(name.decode("ascii", "replace"))[:100]
            raise InvalidArgumentError(f"the query parameter {shown!r} {NOT_UTF8_ESCAPES}")
    # (not reached: when every name and value decodes, so does the whole)
    raise InvalidArgumentError(f"the query string {NOT_UTF8_ESCAPES}")


def _check_escapes(raw: bytes, what: str) -> None:
    if not _decodes(raw):
        raise InvalidArgumentError(f"{what} {NOT_UTF8_ESCAPES}")


def _decodes(raw: bytes) -> bool:
    """Whether ``raw`` (part of a URL) is UTF-8 once its %-escapes are decoded."""
    if b"%" not in raw and raw.isascii():
        return True
    try:
        urllib.parse.unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_query_names(request: Request, known: frozenset[str]) -> None:
    """Refuse a query parameter the route does not take, as a JSON body's unknown field
    is refused: ignored, a misspelt ``?versoin=3`` read the current text, and a
    ``?if_match=<etag>`` on a PUT or DELETE let the change go ahead regardless."""
    check_query_string(request)
    unknown = sorted(set(request.query_params.keys()) - known)
    if not unknown:
        return
    names = ", ".join(repr(name[:40]) for name in unknown[:5])
    takes = ", ".join(sorted(known)) or "none"
    hint = ""
    if any(name.lower().replace("-", "_") in _HEADER_NAMES for name in unknown):
        hint = "; a precondition goes in the If-Match (or If-None-Match: *) header"
    raise InvalidArgumentError(
        f"unknown query parameter(s) {names} (this route takes: {takes}){hint}"
    )


_HEADER_NAMES = frozenset({"if_match", "if_none_match", "etag"})


def query_str(request: Request, name: str, default: str | None = None) -> str | None:
    check_query_string(request)
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise InvalidArgumentError(f"{name} is given more than once")
    return values[0] if values else default


def query_optional_int(request: Request, name: str) -> int | None:
    text = query_str(request, name)
    if text is None:
        return None
    # (the command lines' rule, ``shared.numerals``: ``--5`` passed an ``lstrip("-")``
    # test here and failed in ``int()``, a 500)
    value = whole(text)
    if value is None:
        raise InvalidArgumentError(f"{name} must be a whole number, not {text[:40]!r}")
    if abs(value) >= 10**19:  # past any range a tool takes (the tool says which)
        raise InvalidArgumentError(f"{name} is out of range: {text[:40]!r}")
    return value


def query_int(request: Request, name: str, default: int) -> int:
    value = query_optional_int(request, name)
    return default if value is None else value


def query_bool(request: Request, name: str, default: bool) -> bool:
    text = query_str(request, name)
    if text is None:
        return default
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise InvalidArgumentError(f"{name} must be true or false, not {text[:40]!r}")


def query_version(request: Request, name: str) -> Version | None:
    """A version given in the query (``version_value``), None when absent; given empty
    (``?version=``) it is refused, as an empty number is (it read the current text)."""
    text = query_str(request, name)
    if text == "":
        raise InvalidArgumentError(f"{name} is empty: give a version from history, or leave it out")
    return version_value(text, name)


def version_value(value: object, name: str = "version") -> Version | None:
    """A version as history gives it: a whole number (digits in a query) or an opaque id."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidArgumentError(f"{name} must be a version number or id")
    if isinstance(value, str):
        if len(value) > 200:
            raise InvalidArgumentError(f"{name} is too long")
        if value.isascii() and value.isdigit():
            return int(value)
    return value


async def read_body(request: Request, cap: int) -> bytes:
    """The whole body, refused with too_large as soon as it passes ``cap`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > cap:
        raise TooLargeError(f"the body is larger than the limit of {cap} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise TooLargeError(f"the body is larger than the limit of {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgumentError("the body is not valid UTF-8") from None


class _BodyError(ValueError):
    """A body that parses but says two things, or a number JSON has not."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys each appear once: ``{"path": "a", "path": "b"}`` is refused
    (which one a reader takes differs: a proxy may check the first, the tool use the last)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _BodyError(f"the body names the field {key[:100]!r} twice")
            seen.add(key)
    return value


def _no_constant(name: str) -> Any:
    """``NaN`` and ``Infinity`` are Python's, not JSON's: refused as not valid JSON."""
    raise _BodyError(f"the body is not valid JSON ({name} is no JSON number)")


def json_object(data: bytes) -> dict[str, Any]:
    text = decode_text(data)
    try:
        value = json.loads(
            text or "null", object_pairs_hook=_unique_keys, parse_constant=_no_constant
        )
    except _BodyError as err:
        raise InvalidArgumentError(str(err)) from None
    except (ValueError, RecursionError):
        raise InvalidArgumentError("the body is not valid JSON") from None
    if not isinstance(value, dict):
        raise InvalidArgumentError("the body must be a JSON object")
    # "\ud800" is valid JSON but no text: no file or index can store it
    bad = field_not_text(value) if _SURROGATE.search(text) else None
    if bad is not None:
        raise InvalidArgumentError(
            f"the field {bad!r} holds a lone UTF-16 surrogate (\\ud800-\\udfff): not valid text"
        )
    return value


def fields(body: Mapping[str, Any], spec: Mapping[str, tuple[Any, Any]]) -> dict[str, Any]:
    """Check ``body`` against ``spec`` (name -> (type or tuple of types, default)).

    Unknown keys are refused (as the tools refuse unknown arguments); None is allowed
    only where the default is None; bool never passes for int.
    """
    unknown = sorted(set(body) - set(spec))
    if unknown:
        raise InvalidArgumentError(f"unknown field(s): {', '.join(unknown)[:200]}")
    result: dict[str, Any] = {}
    for name, (kind, default) in spec.items():
        if name not in body:
            if default is REQUIRED:
                raise InvalidArgumentError(f"the field {name!r} is required")
            result[name] = default
            continue
        value = body[name]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if value is None and default is None:
            result[name] = None
        elif not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise InvalidArgumentError(f"the field {name!r} has the wrong type")
        else:
            result[name] = value
    return result


def quote_etag(etag: str) -> str:
    return f'"{etag}"'


def _etags(header: str) -> list[str]:
    tags = []
    for part in header.split(","):
        tag = part.strip()
        tag = tag[2:] if tag.startswith("W/") else tag
        if len(tag) >= 2 and tag[0] == tag[-1] == '"':
            tag = tag[1:-1]
        if tag:
            tags.append(tag)
    return tags


def header_list(request: Request, name: str) -> str | None:
    """A list header's value, its repeated lines joined as one (RFC 9110 5.3: ``If-Match:
    "a"`` and ``If-Match: "b"`` mean ``If-Match: "a", "b"``); None when not sent. Read as
    its first line (Starlette's ``get``), a second precondition was dropped unseen."""
    lines = request.headers.getlist(name)
    return ", ".join(lines) if lines else None


def write_precondition(request: Request) -> str | None:
    """``If-Match: <etag>`` -> that etag; ``If-None-Match: *`` -> '' (must not exist);
    ``If-Match: *`` -> '*' (must exist: any content, RFC 9110 13.1.1); a list of etags ->
    its strong ones joined by ``ETAG_LIST`` (the file is as any of them), a list of only
    weak ones -> a weak etag (never matched: strong comparison)."""
    if_match = header_list(request, "if-match")
    if_none = header_list(request, "if-none-match")
    if if_match is not None and if_none is not None:
        raise InvalidArgumentError("send If-Match or If-None-Match, not both")
    if if_none is not None:
        if if_none.strip() != "*":
            raise InvalidArgumentError("a write takes only If-None-Match: *")
        return ""
    if if_match is None:
        return None
    if if_match.strip() == "*":
        return ANY
    parts = [part.strip() for part in if_match.split(",") if part.strip()]
    tags = _etags(if_match)
    malformed = len(tags) != len(parts) or any('"' in tag for tag in tags)
    if malformed or not tags or "*" in tags:  # (also "*" in quotes or in a list)
        raise InvalidArgumentError(
            'If-Match takes the etags you read ("<etag>", or a list: "<a>", "<b>"),'
            " or * (the file must exist)"
        )
    strong = [tag for part, tag in zip(parts, tags, strict=True) if not part.startswith("W/")]
    if not strong:  # RFC 9110: If-Match compares strong etags only
        return WEAK + tags[0]  # (never matched: 412 where the file is, 404 where nothing is)
    return ETAG_LIST.join(dict.fromkeys(strong))


def if_match_fails(request: Request, etag: str) -> bool:
    """Whether a read's ``If-Match`` names none of ``etag`` (RFC 9110 13.1.1: the request
    is not performed, 412): a client reading a note in pages (offset/limit) sends its
    first page's etag, so that a note changed between pages is said, not spliced. Strong
    comparison (a weak etag never matches); a list matches when any of it does (a read
    changes nothing, so no race to weigh); ``*`` any file."""
    header = header_list(request, "if-match")
    if header is None or header.strip() == "*":
        return False
    strong = [part for part in header.split(",") if not part.strip().startswith("W/")]
    return etag not in _etags(",".join(strong))


def not_modified(request: Request, etag: str) -> bool:
    """Whether a GET's ``If-None-Match`` already names ``etag``."""
    header = header_list(request, "if-none-match")
    if header is None:
        return False
    return header.strip() == "*" or etag in _etags(header)


async def json_body(request: Request, cap: int) -> dict[str, Any]:
    """A route's JSON object body (``application/json``), at most ``cap`` bytes."""
    if media_type(request) not in JSON_TYPES:
        raise UnsupportedMediaTypeError(
            "this route takes a JSON body (Content-Type: application/json)"
        )
    return json_object(await read_body(request, cap))


def precondition(request: Request, in_body: str | None) -> str | None:
    """``if_match`` from the ``If-Match`` (or ``If-None-Match: *``) header or from the body,
    not both: a header that was ignored let a restore or a move go ahead regardless."""
    header = write_precondition(request)
    if header is not None and in_body is not None:
        raise InvalidArgumentError("send the etag in If-Match or in the body, not both")
    return in_body if header is None else header
