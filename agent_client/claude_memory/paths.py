"""``/memories/...`` paths: the SDK's own checks first, then the place in the vault.

The SDK's local tool takes any path that starts with ``/memories`` (a plain prefix test:
``/memoriesX/y`` is ``X/y``), drops empty and ``.`` segments, resolves ``..`` (even out
and back in by name: ``/memories/../memories/a`` is ``a``) and refuses what ends outside,
with its own words. The same here, on strings (the vault has no symbolic links to
follow; above the SDK's unknown base folder nothing leads back): the vault's sandbox then refuses
what it never stores (hidden names, control characters, device names...), with its
``forbidden_path`` code.
"""

from __future__ import annotations

from dataclasses import dataclass

from anthropic.lib.tools import ToolError

ROOT = "/memories"
MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class MemoryPath:
    """A checked path: ``shown`` as the model wrote it (answers echo it), ``parts`` the
    segments below ``/memories`` (empty for ``/memories`` itself)."""

    shown: str
    parts: tuple[str, ...]
    too_long: bool = False  # a name of more than 255 bytes: refused when first used

    def usable(self) -> MemoryPath:
        """The path itself; the SDK's raw error for an over-long name, which it meets at
        the first file operation (after its checks, so a later check may speak first)."""
        if self.too_long:
            raise OSError(36, "File name too long")
        return self

    @property
    def is_root(self) -> bool:
        return not self.parts

    @property
    def parent(self) -> tuple[str, ...]:
        return self.parts[:-1]

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else ""

    def inside(self, other: MemoryPath) -> bool:
        """Whether this path lies strictly below ``other``."""
        return len(self.parts) > len(other.parts) and self.parts[: len(other.parts)] == other.parts


def check(path: str) -> MemoryPath:
    """Validate ``path`` as the SDK does, with its messages (and its raw error for a NUL
    byte, which reaches the model as ``repr`` of the error)."""
    if not path.startswith(ROOT):
        raise ToolError(f"Path must start with /memories, got: {path}")
    if "\x00" in path:
        raise ValueError("embedded null byte")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # the SDK fails naming its own folder; the vault refuses
        raise ToolError(
            f"forbidden_path: {path}: the path is not valid UTF-8 (a lone surrogate)"
        ) from None
    stack: list[str] = ["memories"]  # below the SDK's base folder, whose parent is unknown
    escaped = False
    for segment in path[len(ROOT) :].lstrip("/").split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if stack:
                stack.pop()
            else:
                escaped = True  # above the base folder: never back inside by name
        elif not escaped:
            stack.append(segment)
    if escaped or not stack or stack[0] != "memories":
        raise ToolError(f"Path {path} would escape /memories directory")
    parts = tuple(stack[1:])
    too_long = any(len(p.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for p in parts)
    return MemoryPath(path, parts, too_long)


def vault_path(folder: str, parts: tuple[str, ...]) -> str:
    """The vault-relative path of ``parts`` inside the memory folder."""
    return "/".join((folder, *parts))
