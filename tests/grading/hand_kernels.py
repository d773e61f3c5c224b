"""A loop nest written by hand with the instruction-generation API, for the tests that need a
valid (or a deliberately wrong) program without the code generator."""

from __future__ import annotations


def loop_nest(kb, rows: int, cols: int, last_inner_only: bool = False):
    """``kb`` filled with a loop nest of ``rows`` x ``cols`` output tiles (ragged at the
    edges), each summing the whole inner dimension in one step; with ``last_inner_only``,
    only its last 32 (fast, and wrong). Returns ``kb``."""
    ext, (x, w) = kb.extents, kb.operands
    acc = kb.names[kb.contraction]
    made = {out for out, _, _ in kb.epilogue_ops}
    extra = [v for _, _, ins in kb.epilogue_ops for v in ins if v not in made and v != acc]
    k0 = ext["inner"] - 32 if last_inner_only else 0
    for r in range(0, ext["rows"], rows):
        for c in range(0, ext["cols"], cols):
            t = kb.tile(
                (r, min(rows, ext["rows"] - r)),
                (c, min(cols, ext["cols"] - c)),
                (k0, ext["inner"] - k0),
            )
            where, at = {}, 0
            for name in (x, w, *extra):
                where[name] = kb.load(name, t, at)
                at += -(-kb.tile_bytes(name, t) // 64) * 64
            out = kb.contract(t, at, {x: where[x], w: where[w]})
            for value, _op, ins in kb.epilogue_ops:
                kb.epilogue(value, t, at, {v: where.get(v, out) for v in ins})
            kb.store(kb.outputs[0], t, at)
    return kb
