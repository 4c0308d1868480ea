"""Parameter types shared by the tools (their descriptions are part of the tool schemas)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

Lang = Annotated[str, Field(description="vault id, e.g. 'en', 'ja', 'zh-Hans'")]
RelPath = Annotated[str, Field(description="POSIX path relative to the vault root")]
Folder = Annotated[str, Field(description="folder to search in ('' = the vault root)")]
# grep's: a folder, or one file (searched whatever the glob)
SearchedPath = Annotated[
    str, Field(description="folder to search in ('' = the vault root), or one file")
]
Reason = Annotated[
    str | None,
    Field(description="why, kept in history (≤ 500 chars, one line), e.g. 'entry:<id> <title>'"),
]
IfMatch = Annotated[
    str | None, Field(description="etag you read; '' = must not exist yet; '*' = must exist")
]
