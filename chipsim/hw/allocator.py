"""A caching allocator for eager tensors in DRAM, modelled on PyTorch's CUDA allocator.

PyTorch (``c10/cuda/CUDACachingAllocator.cpp``) never returns memory to the driver when a
tensor dies: it keeps the block in a cache and reuses it for the next request of a fitting
size, because asking the driver (``cudaMalloc``) is slow. This model keeps its main rules:

* every size is rounded up to a multiple of 512 bytes;
* requests up to 1 MiB come from 2 MiB *segments* (the small pool); requests up to 10 MiB
  get a 20 MiB segment; larger ones a segment rounded up to 2 MiB (the large pool);
* a segment is split into blocks; a free block is cached, merged with free neighbours,
  and found again by best fit (smallest block that is big enough, lowest address on ties);
* when the device is full, cached segments that are entirely free are released and the
  request is retried; if it still fails, :class:`~chipsim.errors.OutOfMemoryError` says how
  much memory was free but fragmented.

So *reserved* bytes (segments taken from the device) are at least the *allocated* bytes
(live tensors); the difference is the cache, and part of it may be too fragmented to use.

Example:
    >>> alloc = CachingAllocator(64 * 2**20)
    >>> a = alloc.malloc(1000)
    >>> a.size, alloc.allocated_bytes, alloc.reserved_bytes
    (1024, 1024, 2097152)
    >>> alloc.free(a); alloc.allocated_bytes, alloc.reserved_bytes
    (0, 2097152)
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field

from chipsim.errors import OutOfMemoryError, SimulationError
from chipsim.i18n import N_, tr

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20  # requests up to this go to the small pool
SMALL_SEGMENT = 2 << 20
#: The two pools' names, shown through tr() in the out-of-memory message.
_POOLS = {"small": N_("small"), "large": N_("large")}
LARGE_SEGMENT = 20 << 20  # segment for requests between SMALL_SIZE and MIN_LARGE_ALLOC
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20


@dataclass(eq=False, slots=True)
class Block:
    """A piece of a segment: ``[offset, offset + size)`` in DRAM, allocated or cached."""

    offset: int
    size: int
    segment: Segment
    allocated: bool = False
    requested: int = 0


@dataclass(eq=False, slots=True)
class Segment:
    """Memory taken from the device in one piece, split into blocks (in address order)."""

    offset: int
    size: int
    pool: str  # "small" or "large"
    blocks: list[Block] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class MemorySample:
    """Allocator state after one malloc or free."""

    event: int
    allocated: int
    reserved: int
    largest_free: int


class CachingAllocator:
    """Dynamic DRAM allocation for eager tensors (see the module docstring)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.segments: list[Segment] = []  # sorted by offset
        self._free: dict[str, list[tuple[int, int]]] = {"small": [], "large": []}
        self._by_key: dict[tuple[int, int], Block] = {}
        self.allocated_bytes = 0
        self.peak_allocated = 0
        self.peak_reserved = 0
        self.history: list[MemorySample] = []

    # -- public API --------------------------------------------------------------------------
    @property
    def reserved_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    def malloc(self, nbytes: int) -> Block:
        """A block of at least ``nbytes`` bytes (rounded up to 512)."""
        if nbytes < 0:
            raise SimulationError(f"cannot allocate a negative size ({nbytes} bytes)")
        size = max(MIN_BLOCK, -(-nbytes // MIN_BLOCK) * MIN_BLOCK)
        pool = "small" if size <= SMALL_SIZE else "large"
        block = self._take_cached(pool, size)
        if block is None:
            seg = self._new_segment(pool, size, nbytes)
            block = seg.blocks[0]
            self._remove_free(block)
        block = self._split(block, size)
        block.allocated = True
        block.requested = nbytes
        self.allocated_bytes += block.size
        self._sample()
        return block

    def free(self, block: Block) -> None:
        """Return ``block`` to the cache (merging it with free neighbours)."""
        if not block.allocated:
            raise SimulationError(f"block at DRAM offset {block.offset} was freed twice")
        block.allocated = False
        self.allocated_bytes -= block.size
        seg = block.segment
        i = seg.blocks.index(block)
        for j in (i + 1, i - 1):  # merge with the next, then the previous free neighbour
            if 0 <= j < len(seg.blocks) and not seg.blocks[j].allocated:
                other = seg.blocks[j]
                self._remove_free(other)
                lo = min(block.offset, other.offset)
                block.size += other.size
                block.offset = lo
                seg.blocks.remove(other)
        self._add_free(block)
        self._sample()

    def empty_cache(self) -> None:
        """Give segments that are entirely free back to the device (``torch.cuda.empty_cache``)."""
        for seg in list(self.segments):
            if len(seg.blocks) == 1 and not seg.blocks[0].allocated:
                self._remove_free(seg.blocks[0])
                self.segments.remove(seg)

    def largest_free_block(self) -> int:
        sizes = [k[0] for pool in self._free.values() for k in pool[-1:]]
        return max(sizes, default=0)

    @property
    def fragmentation(self) -> float:
        """Share of cached (reserved but unallocated) bytes outside the largest free block."""
        cached = self.reserved_bytes - self.allocated_bytes
        return 0.0 if cached == 0 else 1.0 - self.largest_free_block() / cached

    # -- internals ---------------------------------------------------------------------------
    def _sample(self) -> None:
        reserved = self.reserved_bytes
        self.peak_allocated = max(self.peak_allocated, self.allocated_bytes)
        self.peak_reserved = max(self.peak_reserved, reserved)
        self.history.append(
            MemorySample(
                len(self.history), self.allocated_bytes, reserved, self.largest_free_block()
            )
        )

    def _add_free(self, block: Block) -> None:
        key = (block.size, block.offset)
        insort(self._free[block.segment.pool], key)
        self._by_key[key] = block

    def _remove_free(self, block: Block) -> None:
        key = (block.size, block.offset)
        pool = self._free[block.segment.pool]
        pool.pop(bisect_left(pool, key))
        del self._by_key[key]

    def _take_cached(self, pool: str, size: int) -> Block | None:
        keys = self._free[pool]
        i = bisect_left(keys, (size, -1))
        if i == len(keys):
            return None
        block = self._by_key[keys[i]]
        self._remove_free(block)
        return block

    def _split(self, block: Block, size: int) -> Block:
        rest = block.size - size
        # small blocks split down to 512 bytes; large ones only if more than 1 MiB remains
        if rest >= MIN_BLOCK and (block.segment.pool == "small" or rest > SMALL_SIZE):
            seg = block.segment
            tail = Block(block.offset + size, rest, seg)
            block.size = size
            seg.blocks.insert(seg.blocks.index(block) + 1, tail)
            self._add_free(tail)
        return block

    def _segment_size(self, pool: str, size: int) -> int:
        if pool == "small":
            return SMALL_SEGMENT
        if size < MIN_LARGE_ALLOC:
            return LARGE_SEGMENT
        return -(-size // ROUND_LARGE) * ROUND_LARGE

    def _find_gap(self, size: int) -> int | None:
        cursor = 0
        for seg in self.segments:
            if seg.offset - cursor >= size:
                return cursor
            cursor = seg.offset + seg.size
        return cursor if self.capacity - cursor >= size else None

    def _new_segment(self, pool: str, size: int, nbytes: int) -> Segment:
        seg_size = self._segment_size(pool, size)
        offset = self._find_gap(seg_size)
        if offset is None and seg_size > size:  # a full-size segment does not fit: try exact
            seg_size = -(-size // MIN_BLOCK) * MIN_BLOCK
            offset = self._find_gap(seg_size)
        if offset is None:
            self.empty_cache()  # like PyTorch: release cached segments and retry
            offset = self._find_gap(seg_size)
        if offset is None:
            self._raise_oom(nbytes, size)
        seg = Segment(offset, seg_size, pool)
        block = Block(offset, seg_size, seg)
        seg.blocks.append(block)
        insort(self.segments, seg, key=lambda s: s.offset)
        self._add_free(block)
        return seg

    def _raise_oom(self, nbytes: int, size: int) -> None:
        reserved = self.reserved_bytes
        cached = reserved - self.allocated_bytes
        pool = "small" if size <= SMALL_SIZE else "large"
        other = "large" if pool == "small" else "small"
        free = {p: sum(k[0] for k in keys) for p, keys in self._free.items()}
        largest = {p: max((k[0] for k in keys), default=0) for p, keys in self._free.items()}
        raise OutOfMemoryError(
            tr(
                "DRAM out of memory: tried to allocate {request} (rounded to {size}). "
                "Capacity {capacity}; {allocated} allocated by live tensors; {reserved} "
                "reserved in {segments} segments, of which {cached} is free but fragmented "
                "(largest free block {largest_block}); {never} never reserved (largest gap "
                "{gap}).\n"
                "Why: the allocator keeps two pools and a block never moves between them: "
                "requests up to {small_size} are cut from {small_segment} segments (the small "
                "pool), larger ones from the large pool's segments. This request needs one "
                "piece of {size} from the {pool} pool, whose free blocks hold {pool_free} "
                "(largest {pool_largest}); the {other_free} free in the {other} pool cannot "
                "serve it, and no gap between segments is wide enough for a new one.\n"
                "Delete tensors you no longer need, or use smaller tensors.",
                request=_mib(nbytes),
                size=_mib(size),
                capacity=_mib(self.capacity),
                allocated=_mib(self.allocated_bytes),
                reserved=_mib(reserved),
                segments=len(self.segments),
                cached=_mib(cached),
                largest_block=_mib(self.largest_free_block()),
                never=_mib(self.capacity - reserved),
                gap=_mib(self._largest_gap()),
                small_size=_mib(SMALL_SIZE),
                small_segment=_mib(SMALL_SEGMENT),
                pool=tr(_POOLS[pool]),
                pool_free=_mib(free[pool]),
                pool_largest=_mib(largest[pool]),
                other_free=_mib(free[other]),
                other=tr(_POOLS[other]),
            )
        )

    def _largest_gap(self) -> int:
        """The widest run of never-reserved bytes (a new segment needs one piece)."""
        gaps, cursor = [], 0
        for seg in self.segments:
            gaps.append(seg.offset - cursor)
            cursor = seg.offset + seg.size
        gaps.append(self.capacity - cursor)
        return max(gaps)


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"
