"""scan.compile_glob: the string fast path agrees with the general RE2 translation."""

from __future__ import annotations

import pytest
import re2

from indexer.vault.scan import SuffixGlob, _glob_regex, _re2_options, compile_glob

PATHS = ["a.md", "x/a.md", "x/y/b.md", "md", "a.mdx", "a/b", "a.md/b", "x/y/z.txt", "日/ノ.md"]
SUFFIX_GLOBS = ["**/*.md", "*.md", "**/*", "*", "**/*.txt", "*x", "*.md.assets"]
OTHER_GLOBS = ["items/*.md", "**/n[0-2].md", "*a*b", "?.md", "**/x/*.md"]


@pytest.mark.parametrize("pattern", SUFFIX_GLOBS)
def test_suffix_fast_path_equals_the_regex(pattern: str) -> None:
    fast = compile_glob(pattern)
    assert isinstance(fast, SuffixGlob)
    slow = re2.compile(_glob_regex(pattern), _re2_options())
    for path in PATHS:
        assert bool(fast.fullmatch(path)) == bool(slow.fullmatch(path)), (pattern, path)


@pytest.mark.parametrize("pattern", OTHER_GLOBS)
def test_other_globs_use_re2(pattern: str) -> None:
    assert not isinstance(compile_glob(pattern), SuffixGlob)
