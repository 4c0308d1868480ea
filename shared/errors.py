"""The one error tree of vault memory.

Every refusal the Vault MCP server can give is a ``VaultError`` subclass whose ``code``
is one of the SPEC's stable codes. The message a client sees is ``"<code>: <text>"``;
``error_from_message`` turns such a message back into the typed exception, so the
agent client raises exactly what the server refused with.

    VaultError (code "internal")
    ├── InvalidLangError        invalid_lang
    ├── ForbiddenPathError      forbidden_path
    ├── NotFoundError           not_found
    ├── ConflictError           conflict
    ├── InvalidFrontmatterError invalid_frontmatter
    ├── TooLargeError           too_large
    ├── InvalidArgumentError    invalid_argument
    ├── StorageError            internal          the disk failed the call (full, I/O error)
    ├── IndexerOfflineError     indexer_offline (client side: no server to talk to)
    └── OperationalError        (the indexer's own life, never sent over the wire)
        ├── ConfigError         config           bad settings or flags
        ├── AlreadyRunningError already_running  another indexer holds the workspace
        ├── StartupError        startup          could not start serving
        ├── IndexSchemaError    index_schema     an index file this indexer cannot use
        └── HistoryStoreError   history_store    a history file this indexer cannot use

Each command-line tool maps this tree to exit codes in one place.
"""

from __future__ import annotations

# The largest whole number an argument may hold: SQLite's INTEGER is 64-bit, and a larger
# version, offset or limit would overflow there (an internal error, not a refusal).
MAX_WHOLE_NUMBER = 2**63 - 1


class VaultError(Exception):
    """Base of every vault-memory error; ``str(err)`` is ``"<code>: <message>"``."""

    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def words_of(err: BaseException) -> str:
    """What ``err`` says, without a ``VaultError``'s code: a setting refused again as a
    ``ConfigError`` read "config: config: ..." once, the code said twice."""
    return err.message if isinstance(err, VaultError) else str(err)


class InvalidLangError(VaultError, ValueError):
    """Also a ``ValueError``: a bad lang in an entry is a bad value, whoever checks it."""

    code = "invalid_lang"


class ForbiddenPathError(VaultError):
    code = "forbidden_path"


class SystemRefusedError(ForbiddenPathError):
    """``forbidden_path`` the system gave (permission denied, a read-only file system),
    not the path asked for: a command fails (exit 1) where a refused path is bad usage."""


class NotFoundError(VaultError):
    code = "not_found"


class ConflictError(VaultError):
    code = "conflict"


class ExistenceConflictError(ConflictError):
    """``if_match=''`` on a file that exists, or ``'*'`` on one that does not: said in
    the tool's words; REST says it in its headers' (``If-None-Match: *``, ``If-Match: *``)
    when a header asked it (``http_errors.header_words``)."""

    def __init__(self, exists: bool) -> None:
        self.exists = exists
        super().__init__(
            "the file already exists (if_match='' means it must not)"
            if exists
            else "the file does not exist (if_match='*' means it must)"
        )
        self.args = (exists,)  # (a copy or a pickle makes it again from this)


class InvalidFrontmatterError(VaultError):
    code = "invalid_frontmatter"


class TooLargeError(VaultError):
    code = "too_large"


class InvalidArgumentError(VaultError):
    code = "invalid_argument"


class StorageError(VaultError):
    """The system failed the call (a full disk, an I/O error, no file descriptor left);
    the message says which, in plain words. Nothing was changed. ``http_status`` is what
    the REST API answers (507 for a full disk)."""

    def __init__(self, message: str, http_status: int = 500) -> None:
        super().__init__(message)
        self.http_status = http_status


class TooBigForHistoryError(StorageError):
    """History cannot store the file at all (its bytes past SQLite's length limit, 1e9
    by default, with ``INDEXER_MAX_FILE_BYTES`` raised above it): refused again for as
    long as the file stays as it is, unlike a full disk."""


class IndexerOfflineError(VaultError):
    """No indexer answers at the discovered URL (or there is no URL file)."""

    code = "indexer_offline"


class OperationalError(VaultError):
    """Something about running the indexer itself, not about a tool call."""

    code = "operational"


class ConfigError(OperationalError, ValueError):
    """A setting or flag is missing or has a bad value (bad usage: exit 2)."""

    code = "config"


class AlreadyRunningError(OperationalError):
    """Another ``indexer serve`` holds the workspace lock."""

    code = "already_running"


class StartupError(OperationalError):
    """The server could not start listening (address in use, bad host...)."""

    code = "startup"


class IndexSchemaError(OperationalError):
    """The index file was written by a newer indexer, or is unusable."""

    code = "index_schema"


class HistoryStoreError(OperationalError):
    """The history (``W/.indexer/history/``) is damaged, not ours, or written by a newer
    indexer. Unlike the index it cannot be rebuilt, so it is refused, never reset."""

    code = "history_store"


ERRORS_BY_CODE: dict[str, type[VaultError]] = {
    cls.code: cls
    for cls in (
        InvalidLangError,
        ForbiddenPathError,
        NotFoundError,
        ConflictError,
        InvalidFrontmatterError,
        TooLargeError,
        InvalidArgumentError,
        IndexerOfflineError,
    )
}


def error_from_message(text: str) -> VaultError:
    """Rebuild the typed error from a ``"<code>: <message>"`` tool-error text."""
    code, sep, rest = text.partition(":")
    cls = ERRORS_BY_CODE.get(code.strip()) if sep else None
    if cls is None:
        return VaultError(text)
    return cls(rest.strip())
