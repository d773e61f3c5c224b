"""The out-of-memory message names the hidden reason: the small and large pools."""

import pytest

from chipsim.errors import OutOfMemoryError
from chipsim.hw.allocator import CachingAllocator


def test_oom_says_which_pool_and_why_free_bytes_elsewhere_do_not_help():
    a = CachingAllocator(8 * 2**20)
    blocks = [a.malloc(2**19) for _ in range(16)]  # 4 small segments fill the device
    for b in blocks[::2]:
        a.free(b)  # 4 MiB free, in the small pool only
    with pytest.raises(OutOfMemoryError) as info:
        a.malloc(int(1.23 * 2**20))
    msg = str(info.value)
    assert "free but fragmented" in msg  # the numbers stay
    assert "needs one piece of 1.23 MiB from the large pool" in msg
    assert "the 4.00 MiB free in the small pool cannot serve it" in msg
    assert "requests up to 1.00 MiB are cut from 2.00 MiB segments" in msg
    assert "never reserved (largest gap 0.00 MiB)" in msg
