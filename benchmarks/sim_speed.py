"""Benchmark: simulator speed in instructions per second, timing-only vs functional.

Lowers one large tiled kernel (a 4096x256 @ 256x64 matmul with a bias and relu epilogue,
in a 128 KiB SRAM window so it needs many tiles) and simulates it repeatedly.

    .venv/bin/python benchmarks/sim_speed.py
"""

from __future__ import annotations

import time

import numpy as np

from chipsim.codegen import KernelSpec, Location, lower
from chipsim.hw import Operand, Simulator, get_chip
from chipsim.ir import GraphBuilder, f32


def program():
    chip = get_chip("edge-npu")
    b = GraphBuilder()
    x, w, c = b.input((4096, 256), f32), b.input((256, 64), f32), b.input((64,), f32)
    y = b.op("relu", b.op("add", b.op("matmul", x, w), c))
    loc, cursor = {}, 0
    for v in (x, w, c, y):
        loc[v] = Location("dram", cursor)
        cursor += v.type.nbytes
    spec = KernelSpec.of(b.nodes, [y], loc)
    spec = KernelSpec(spec.name, spec.nodes, spec.inputs, spec.outputs, loc, (0, 128 * 1024))
    return chip, lower(spec, chip), [(x, loc[x]), (w, loc[w]), (c, loc[c])]


def main() -> None:
    chip, prog, ins = program()
    rng = np.random.default_rng(0)
    for functional in (False, True):
        best = float("inf")
        for _ in range(5):
            sim = Simulator(chip, functional=functional)
            if functional:
                for v, loc in ins:
                    sim.memory["dram"].write(
                        Operand("dram", loc.offset, v.shape, "f32"), rng.standard_normal(v.shape)
                    )
            t0 = time.perf_counter()
            sim.run(prog)
            best = min(best, time.perf_counter() - t0)
        mode = "functional" if functional else "timing-only"
        print(
            f"{mode:11s}: {len(prog):,} instructions in {best * 1e3:.1f} ms = "
            f"{len(prog) / best:,.0f} instr/s; {sim.cycles:,} simulated cycles"
        )


if __name__ == "__main__":
    main()
