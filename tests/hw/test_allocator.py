"""The caching allocator: rounding, caching, splitting, merging, OOM messages."""

import pytest

from chipsim.errors import OutOfMemoryError
from chipsim.hw.allocator import CachingAllocator


def test_rounding_and_small_segment():
    a = CachingAllocator(64 * 2**20)
    b = a.malloc(1)
    assert (b.size, a.allocated_bytes, a.reserved_bytes) == (512, 512, 2 * 2**20)


def test_freed_block_is_cached_and_reused():
    a = CachingAllocator(64 * 2**20)
    b1 = a.malloc(4096)
    off = b1.offset
    a.free(b1)
    assert a.allocated_bytes == 0 and a.reserved_bytes == 2 * 2**20  # cached, not returned
    assert a.malloc(4096).offset == off


def test_split_and_merge():
    a = CachingAllocator(64 * 2**20)
    x, y, z = a.malloc(1024), a.malloc(1024), a.malloc(1024)
    assert (x.offset, y.offset, z.offset) == (0, 1024, 2048)
    a.free(x)
    a.free(y)  # merges with x
    w = a.malloc(2048)
    assert w.offset == 0
    a.free(w)
    a.free(z)
    assert a.largest_free_block() == 2 * 2**20  # the whole segment is one block again


def test_large_pool_uses_20mib_segments():
    a = CachingAllocator(64 * 2**20)
    a.malloc(3 * 2**20)
    assert a.reserved_bytes == 20 * 2**20


def test_oom_reports_fragmentation():
    a = CachingAllocator(8 * 2**20)
    blocks = [a.malloc(2**19) for _ in range(16)]  # fills 4 small segments
    for b in blocks[::2]:
        a.free(b)  # 4 MiB free, but only in 512 KiB holes
    with pytest.raises(
        OutOfMemoryError,
        match=r"4.00 MiB is free but fragmented.*largest free "
        r"block 0.50 MiB",
    ):
        a.malloc(2 * 2**20)
    assert a.fragmentation > 0.8


def test_empty_segments_are_released_before_oom():
    a = CachingAllocator(4 * 2**20)
    a.free(a.malloc(2**20))
    a.free(a.malloc(2**20 + 1))  # a large block in a (shrunk) segment
    assert a.malloc(3 * 2**20).size == 3 * 2**20


def test_history_records_every_event():
    a = CachingAllocator(64 * 2**20)
    a.free(a.malloc(100))
    assert [(s.allocated, s.reserved) for s in a.history] == [(512, 2 * 2**20), (0, 2 * 2**20)]
