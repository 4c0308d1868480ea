"""A block written entry by entry is read back entry by entry
(``shared.yaml_entries.read_entries``): what reading it whole gives, for every block
``dump_entries`` writes; and a write's read-back of its new block when only ``updated``
changed reads that one entry, not the whole block again."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from test_yaml_entries import _meta

from shared import frontmatter as fm
from shared.errors import InvalidFrontmatterError
from shared.frontmatter import _parse_yaml_block, _same, normalize_frontmatter_text
from shared.yaml_entries import dump_entries, read_entries

NOTE = (
    "---\ntitle: Réunion «Atlas»\ntype: meeting\ntags: [projet, 会议, ประชุม]\n"
    "aliases: [اجتماع أطلس]\ncreated: 2026-11-02T10:00:00+01:00\nstatus: draft\n"
    "priority: 2\npeople:\n  - name: Zoë\n    role: 山田\n---\n# Réunion\n\nText.\n"
)


def whole(block: str) -> dict[str, Any] | str:
    """The block read whole, as before (a refusal: its words)."""
    try:
        return _parse_yaml_block(block)
    except InvalidFrontmatterError as err:
        return err.message


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_meta)
def test_a_block_read_entry_by_entry_is_the_block_read_whole(meta: dict[str, Any]) -> None:
    block = dump_entries(meta)
    if block is None:
        return
    by_entry = read_entries(block, fm.parse_yaml_block)
    if len(meta) < 2:
        assert by_entry is None  # (one entry: read whole, as it always was)
        return
    if by_entry is None:  # (an entry refused alone: read whole, which says why)
        return
    read_whole = whole(block)
    assert isinstance(read_whole, dict), read_whole
    assert _same(by_entry, read_whole)


def test_the_read_back_in_a_new_second_reads_the_new_entry_alone() -> None:
    """Count the blocks the strict loader reads whole (``_parse_yaml_block``'s calls)."""
    first = datetime(2026, 12, 7, 20, 0, 0, tzinfo=UTC)
    written = normalize_frontmatter_text(NOTE, now=first)
    read: list[str] = []
    real = fm._parse_yaml_block

    def counted(block: str) -> dict[str, Any]:
        read.append(block)
        return real(block)

    fm._parse_yaml_block = counted
    try:
        again = normalize_frontmatter_text(written, existing=written, now=first.replace(second=1))
    finally:
        fm._parse_yaml_block = real
    assert again == written.replace("20:00:00Z", "20:00:01Z")
    assert read == ["updated: 2026-12-07T20:00:01Z\n"]
