"""history.codec: every blob decodes to exactly its bytes; deltas stay small and bounded."""

from __future__ import annotations

import os
import random
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.vault.history import codec


def prose(seed: int, words: int) -> str:
    """Text that compresses like prose (not like a repeated line)."""
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(800)
    ]
    return " ".join(rng.choices(vocabulary, k=words))


NOTE = (
    "---\nid: 01ABC\ntitle: Go\nupdated: 2026-11-29T20:00:00Z\n---\n# Go\n\n"
    + "".join(f"## Part {i}\n\n{prose(i, 60)}\n\n" for i in range(12))
).encode()


def roundtrip(data: bytes, base: bytes | None = None) -> codec.Blob:
    """Encode ``data`` (on ``base``, stored as blob 7) and rebuild it from its chain."""
    blob = codec.encode(data, codec.sha_of(data), base, None if base is None else 7, 0)
    chain = [blob]
    if blob.kind == codec.DELTA:
        assert base is not None and blob.base == 7
        chain.insert(0, codec.encode(base, codec.sha_of(base)))
    assert codec.rebuild(chain) == data
    assert blob.sha == codec.sha_of(data) and blob.size == len(data)
    return blob


@given(st.binary(max_size=3000), st.binary(max_size=3000))
@settings(max_examples=300, deadline=None)
def test_any_bytes_survive_as_a_delta_of_any_base(data: bytes, base: bytes) -> None:
    roundtrip(data, base)
    roundtrip(data)


@given(st.binary(max_size=200), st.binary(max_size=200), st.binary(max_size=200))
@settings(max_examples=300, deadline=None)
def test_prefix_and_suffix_are_the_longest_common_ones(a: bytes, b: bytes, c: bytes) -> None:
    x, y = a + b + c, a + c
    head = codec.common_prefix(x, y)
    assert x[:head] == y[:head] and (head == min(len(x), len(y)) or x[head] != y[head])
    tail = codec.common_suffix(x, y, len(x) - head, len(y) - head)
    assert tail <= min(len(x), len(y)) - head
    assert tail == 0 or x[-tail:] == y[-tail:]
    longer = tail + 1
    assert longer > min(len(x), len(y)) - head or x[-longer:] != y[-longer:]


def test_a_merge_into_a_note_stores_a_small_delta() -> None:
    merged = NOTE.replace(b"20:00:00Z", b"21:15:40Z") + b"## New\n\nwent, gone.\n"
    assert len(NOTE) > 4000
    blob = roundtrip(merged, NOTE)
    assert blob.kind == codec.DELTA and blob.depth == 1
    assert len(blob.data) < len(zlib.compress(merged)) / 10


def test_an_append_is_a_delta_of_the_added_text_only() -> None:
    added = b"\n## Event\n\n- at: 2026-11-29T20:00:00Z\n\nsomething happened\n"
    blob = roundtrip(NOTE + added, NOTE)
    assert blob.kind == codec.DELTA and blob.head == len(NOTE) and blob.tail == 0
    assert len(blob.data) <= len(added)


def test_a_large_note_changed_in_the_middle_is_a_small_delta() -> None:
    big = "".join(prose(i, 400) for i in range(40)).encode()
    assert len(big) > 80_000  # larger than zlib's window
    changed = big[:40_000] + b"## Inserted\n\nin the middle\n" + big[40_000:]
    blob = roundtrip(changed, big)
    assert blob.kind == codec.DELTA and len(blob.data) < 200


def test_a_rewrite_is_stored_whole_and_images_raw() -> None:
    rewrite = roundtrip(prose(99, 700).encode(), NOTE)
    assert rewrite.kind == codec.FULL and rewrite.base is None and rewrite.depth == 0
    image = os.urandom(4000)
    assert roundtrip(image).kind == codec.RAW
    assert roundtrip(image + b"x", image).kind == codec.DELTA  # bytes appended to bytes


def test_chains_are_cut_at_max_depth() -> None:
    data = NOTE + b"x"
    deep = codec.encode(data, codec.sha_of(data), NOTE, 1, codec.MAX_DEPTH - 1)
    assert deep.kind == codec.DELTA and deep.depth == codec.MAX_DEPTH
    cut = codec.encode(data, codec.sha_of(data), NOTE, 1, codec.MAX_DEPTH)
    assert cut.kind == codec.FULL and cut.depth == 0


def test_a_long_chain_of_appends_rebuilds_every_link() -> None:
    text = NOTE
    chain = [codec.encode(text, codec.sha_of(text))]
    for i in range(50):
        added = text + f"\n## Event {i}\n{prose(i, 20)}\n".encode()
        chain.append(codec.encode(added, codec.sha_of(added), text, i, i))
        text = added
        assert codec.rebuild(chain) == text
