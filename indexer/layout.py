"""Where things live in a workspace (the SPEC's "Workspace layout"), in one place."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Workspace:
    """Paths of one workspace ``W``; creates nothing by itself."""

    root: Path

    @property
    def url_file(self) -> Path:
        return self.root / "indexer.mcp.url"

    @property
    def token_file(self) -> Path:
        return self.root / "indexer.mcp.token"

    @property
    def state_dir(self) -> Path:
        return self.root / ".indexer"

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.sqlite"

    @property
    def lock_path(self) -> Path:
        return self.state_dir / "lock"

    @property
    def languages_dir(self) -> Path:
        return self.root / "memory" / "languages"

    def vault_dir(self, lang: str) -> Path:
        """The vault folder of ``lang`` (the caller has validated ``lang``)."""
        return self.languages_dir / lang / "vault"

    def langs(self) -> list[str]:
        """Langs that have a vault folder on disk, sorted."""
        from shared.models import LANG_RE

        if not self.languages_dir.is_dir():
            return []
        return sorted(
            p.name
            for p in self.languages_dir.iterdir()
            if LANG_RE.fullmatch(p.name) and (p / "vault").is_dir()
        )
