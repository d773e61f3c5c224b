"""A last-level cache in front of DRAM (a GPU's L2): which DRAM bytes are on chip right now.

On a chip whose description has an ``[l2]`` section, every DMA transfer to or from DRAM goes
through this cache (:class:`L2Cache`). It holds the most recently used ``capacity_bytes`` of
DRAM, in lines of ``line_bytes``, least recently used out first:

* a **load** finds some of its lines on chip (*hits*, served at the L2's bandwidth) and the
  rest in DRAM (*misses*, at DRAM bandwidth); all of them are on chip afterwards;
* a **store** writes its lines into the cache (write-back) and marks them *dirty*; DRAM sees
  the bytes only when a dirty line is evicted, and the transfer that evicts it pays for
  writing it back at DRAM bandwidth.

So a tensor one kernel writes and the next reads comes back at the L2's speed while it is
recent enough to be among the last ``capacity_bytes`` used, and a stream larger than the
cache pays DRAM bandwidth both ways. The cache only decides *times*: the values are always
those of DRAM. The host's uploads bypass it, and it forgets the lines they overwrite
(:meth:`L2Cache.forget`).

Residency is tracked per line (one bit each) in blocks of :data:`BLOCK_LINES` lines that share
a stamp of the transfer that last used them (numpy arrays over the DRAM touched so far), and
evictions walk a log of transfers in the order they happened: a run costs O(blocks moved), and
its answers are the same on every run.

Example:
    >>> from chipsim.hw.parts import L2
    >>> from chipsim.hw.isa import Operand, Traffic
    >>> cache = L2Cache(L2(capacity_bytes=4096, bytes_per_cycle=64, line_bytes=128))
    >>> x = Operand("dram", 0, (512,), "f32")            # 2 KiB: 16 lines
    >>> cache.access(x, write=True)                      # a store: into the cache, dirty
    Traffic(hit=2048, miss=0, written_back=0)
    >>> cache.access(x, write=False)                     # read back: every line hits
    Traffic(hit=2048, miss=0, written_back=0)
    >>> y = Operand("dram", 8192, (1024,), "f32")        # 4 KiB more: x is pushed out
    >>> cache.access(y, write=False)                     # ... and its dirty lines written back
    Traffic(hit=0, miss=4096, written_back=2048)
"""

from __future__ import annotations

from collections import deque

import numpy as np

from chipsim.hw.isa import Operand, Traffic
from chipsim.hw.parts import L2

#: Lines tracked together: a block's residency is one bit per line and one stamp (its LRU age).
BLOCK_LINES = 32
_POP16 = np.array([bin(i).count("1") for i in range(1 << 16)], dtype=np.int64)


def _popcount(masks: np.ndarray) -> np.ndarray:
    """Set bits of each 32-bit mask (numpy 1.26 has no bit_count)."""
    return _POP16[masks & 0xFFFF] + _POP16[masks >> 16]


def _runs(op: Operand) -> tuple[np.ndarray, int]:
    """The byte address of each contiguous run ``op`` touches, and the runs' length in bytes."""
    lo, _ = op.byte_range()
    if op.strides is None:
        return np.array([lo], dtype=np.int64), op.nbytes
    shape, strides = op.shape, op.strides
    run, inner = 1, len(shape)  # merge the trailing dims that are dense in memory
    while inner > 0 and strides[inner - 1] == run:
        inner -= 1
        run *= shape[inner]
    starts = np.zeros(1, dtype=np.int64)
    for d in range(inner):
        starts = (starts[:, None] + np.arange(shape[d], dtype=np.int64) * strides[d]).ravel()
    return lo + starts * op.itemsize, run * op.itemsize


# A memo of operand_blocks: a program touches the same tiles again and again (a GEMM re-reads
# its tiles; a timed call repeats its warm-up), and the answer is a pure function of the
# operand's addresses. Bounded by the elements it holds; a hit returns exactly what the
# computation would (the arrays are never written).
_BLOCKS: dict[tuple, tuple[np.ndarray, np.ndarray, int]] = {}
_BLOCKS_HELD = [0]
_BLOCKS_LIMIT = 1 << 22


def _blocks_of(op: Operand, line_bytes: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`operand_blocks` and the number of lines, memoised."""
    key = (op.offset, op.shape, op.strides, op.dtype, line_bytes)
    hit = _BLOCKS.get(key)
    if hit is None:
        blocks, masks = operand_blocks(op, line_bytes)
        hit = (blocks, masks, int(_popcount(masks).sum()))
        if _BLOCKS_HELD[0] + blocks.size > _BLOCKS_LIMIT:
            _BLOCKS.clear()
            _BLOCKS_HELD[0] = 0
        _BLOCKS[key] = hit
        _BLOCKS_HELD[0] += blocks.size
    return hit


def operand_blocks(op: Operand, line_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """The blocks of :data:`BLOCK_LINES` lines ``op`` touches (sorted, distinct) and, for each,
    the mask of its lines touched (bit i: the block's i-th line). A strided view touches only
    the lines of its rows.

    Example:
        >>> col = Operand("dram", 0, (4, 32), "f32", strides=(1024, 1))  # 128 B of each 4 KiB row
        >>> blocks, masks = operand_blocks(col, 128)
        >>> blocks.tolist(), [bin(m) for m in masks.tolist()]
        ([0, 1, 2, 3], ['0b1', '0b1', '0b1', '0b1'])
    """
    if op.nbytes == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    starts, length = _runs(op)
    first, last = starts // line_bytes, (starts + length - 1) // line_bytes
    b_first, b_last = first // BLOCK_LINES, last // BLOCK_LINES
    width = int((b_last - b_first).max()) + 1
    blocks = b_first[:, None] + np.arange(width, dtype=np.int64)  # (runs, width)
    lo = np.maximum(first[:, None], blocks * BLOCK_LINES) - blocks * BLOCK_LINES
    hi = np.minimum(last[:, None], blocks * BLOCK_LINES + BLOCK_LINES - 1) - blocks * BLOCK_LINES
    keep = blocks <= b_last[:, None]
    blocks, lo, hi = blocks[keep], lo[keep], hi[keep]
    masks = ((np.int64(1) << (hi - lo + 1)) - 1) << lo
    if blocks.size > 1 and not np.all(blocks[1:] >= blocks[:-1]):
        order = np.argsort(blocks, kind="stable")
        blocks, masks = blocks[order], masks[order]
    if blocks.size > 1 and not np.all(blocks[1:] > blocks[:-1]):  # rows sharing a block
        head = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1]])
        blocks, masks = blocks[head], np.bitwise_or.reduceat(masks, head)
    return blocks, masks


class L2Cache:
    """The cache's state: which DRAM lines are on chip, which are dirty, in what order used.

    Lines are tracked in blocks of :data:`BLOCK_LINES` (one bit per line); a block is the unit
    of recency, so eviction drops the least recently used *blocks* (hits are still counted
    line by line). This keeps a run over gigabytes of DRAM quick.
    """

    def __init__(self, spec: L2) -> None:
        self.line = spec.line_bytes
        self.write_through = spec.write_through
        self.capacity = spec.capacity_bytes // spec.line_bytes  # in lines
        self._stamp = np.zeros(0, dtype=np.int64)  # per block: last transfer using it
        self._lines = np.zeros(0, dtype=np.int64)  # per block: mask of its lines on chip
        self._dirty = np.zeros(0, dtype=np.int64)  # per block: mask of its dirty lines
        self._log: deque[tuple[int, np.ndarray]] = deque()  # (stamp, blocks) oldest first
        self._clock = 0
        self.resident = 0  # lines on chip

    def _grow(self, top: int) -> None:
        if top > self._stamp.size:
            extra = max(top, 2 * self._stamp.size, 4096) - self._stamp.size
            self._stamp = np.concatenate([self._stamp, np.zeros(extra, np.int64)])
            self._lines = np.concatenate([self._lines, np.zeros(extra, np.int64)])
            self._dirty = np.concatenate([self._dirty, np.zeros(extra, np.int64)])

    def access(self, op: Operand, *, write: bool) -> Traffic:
        """Use ``op``'s DRAM bytes (``write``: a store) and say what that cost."""
        blocks, masks, touched = _blocks_of(op, self.line)
        if blocks.size == 0:
            return Traffic(0, 0, 0)
        self._grow(int(blocks[-1]) + 1)
        held = self._lines[blocks]
        hits = int(_popcount(held & masks).sum()) if held.any() else 0
        self._clock += 1
        self._stamp[blocks] = self._clock
        self._lines[blocks] = held | masks
        if write and not self.write_through:
            self._dirty[blocks] |= masks
        self.resident += touched - hits
        self._log.append((self._clock, blocks))
        back = self._evict() * self.line
        if write:  # write-back: the bytes stop in the cache; write-through: DRAM takes them too
            return Traffic(op.nbytes, 0, back + (op.nbytes if self.write_through else 0))
        # bytes, not lines: the transfer's own bytes split in the proportion of its lines
        hit_bytes = op.nbytes * hits // touched
        return Traffic(hit_bytes, op.nbytes - hit_bytes, back)

    def _evict(self) -> int:
        """Drop least recently used blocks until the cache fits; return dirty lines dropped."""
        if self.resident <= self.capacity:
            return 0
        dirty_out = 0
        stamp, lines, log = self._stamp, self._lines, self._log
        while self.resident > self.capacity:
            when, blocks = log[0]
            need = self.resident - self.capacity
            head = blocks[: need + 64]  # a block holds >= 1 line: never more than `need` go
            alive = stamp[head] == when  # blocks used again belong to a later entry
            live = head[alive]
            sizes = np.cumsum(_popcount(lines[live]))
            if sizes.size and sizes[-1] >= need:
                take = int(np.searchsorted(sizes, need)) + 1  # the fewest oldest enough
                rest = blocks[int(np.flatnonzero(alive)[take - 1]) + 1 :]
            else:
                take, rest = live.size, blocks[head.size :]
            if rest.size:
                log[0] = (when, rest)
            else:
                log.popleft()
            out = live[:take]
            if take:
                dirty_out += int(_popcount(self._dirty[out]).sum())
                self.resident -= int(sizes[take - 1])
                stamp[out] = 0
                lines[out] = 0
                self._dirty[out] = 0
        return dirty_out

    def forget(self, op: Operand) -> None:
        """The host has replaced ``op``'s DRAM bytes: drop its lines, dirty or not, unwritten
        (the host's copies bypass the cache, so an upload into a reused block never finds
        the old tensor's lines on chip)."""
        blocks, masks, _ = _blocks_of(op, self.line)
        blocks, masks = blocks[blocks < self._lines.size], masks[blocks < self._lines.size]
        if blocks.size == 0:
            return
        held = self._lines[blocks]
        self.resident -= int(_popcount(held & masks).sum())
        kept = held & ~masks
        self._lines[blocks] = kept
        self._dirty[blocks] &= ~masks
        self._stamp[blocks[kept == 0]] = 0

    def holds(self, op: Operand) -> float:
        """The share of ``op``'s lines on chip now (0.0 .. 1.0), without using them."""
        blocks, masks, total = _blocks_of(op, self.line)
        seen = blocks < self._lines.size
        held = int(_popcount(self._lines[blocks[seen]] & masks[seen]).sum())
        return held / total if total else 0.0
