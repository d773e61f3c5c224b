"""Issue 13: the calibrated GPU model, its parts one by one, and its held-out error."""

import numpy as np
import pytest

import chipsim
from chipsim.calibration import evaluate, load_measurements
from chipsim.calibration.fit import with_fields

GPU = "datacenter-gpu"


def _records(chip, fn, *shapes, dtype="f16"):
    """Run ``fn`` eagerly (timing only) on inputs of ``shapes``; the simulator's records."""
    dev = chipsim.device(chip, functional=False)
    ins = []
    for s in shapes:
        t = chipsim.TensorType(s, getattr(chipsim, dtype))
        ins.append(chipsim.Tensor(dev.upload(np.empty(0), t), t, dev))
    with dev:
        out = fn(*ins)
        del out
    return dev


def test_gpu_meets_the_issue_13_target_on_held_out_published_rows():
    ev = evaluate(GPU, load_measurements())
    held = ev.summary("heldout")
    assert held.rows == 44 and held.mape <= 0.15
    for op in ev.ops:
        assert 0.85 <= ev.summary("heldout", op).geomean <= 1.15, op
    assert ev.meets_target()


def test_host_dispatch_depends_on_the_kind_of_call():
    chip = chipsim.chip(GPU)
    mm = _records(chip, chipsim.ops.matmul, (64, 64), (64, 64)).sim.records
    ex = _records(chip, chipsim.ops.exp, (64, 64)).sim.records
    assert mm[0].instr.opcode == "launch_library" and mm[0].cycles == chip.launch.library
    assert ex[0].instr.opcode == "launch" and ex[0].cycles == chip.launch.eager_cycles
    assert chip.launch.library > chip.launch.eager_cycles  # cuBLAS costs more than ATen


def test_a_kernel_starts_one_device_launch_latency_after_its_launch():
    chip = chipsim.chip(GPU)
    recs = _records(chip, chipsim.ops.exp, (1024,)).sim.records
    first_on_chip = min(r.start for r in recs if r.instr.unit != "host")
    assert first_on_chip == recs[0].end + chip.launch.device_cycles


def test_eager_launches_queue_ahead_and_download_pays_the_sync():
    chip = chipsim.chip(GPU)
    dev = _records(chip, lambda x: chipsim.ops.exp(chipsim.ops.exp(x)), (4096, 4096))
    launches = [r for r in dev.sim.records if r.instr.opcode == "launch"]
    # the second launch follows the first on the host, long before the first kernel ends
    first_kernel_end = max(r.end for r in dev.sim.records[: dev.spans[0].stop])
    assert launches[1].start == launches[0].end < first_kernel_end
    busy_until = dev.sim.cycles
    dev.sim.run([chipsim.hw.Instr("sync", "host", label="download")])
    sync = dev.sim.records[-1]
    assert sync.start == busy_until and sync.cycles == chip.launch.sync_cycles > 0


def test_long_rows_are_re_read_once_per_reduction_pass_on_the_gpu_only():
    gpu = chipsim.chip(GPU)
    budget_elems = gpu.sm.row_budget_bytes // 4

    def refetched(chip, n):
        recs = _records(chip, chipsim.ops.softmax, (256, n)).sim.records
        return sum(r.instr.work for r in recs if r.instr.opcode == "refetch")

    assert refetched(gpu, budget_elems) == 0
    assert refetched(gpu, 2 * budget_elems) == 2 * 256 * 2 * budget_elems * 2  # passes x bytes
    assert refetched(chipsim.chip("edge-npu"), 2048) == 0  # no SMs: no per-block budget


def test_long_row_softmax_streams_at_about_half_the_short_row_rate():
    gpu = chipsim.chip(GPU)

    def us_per_byte(shape):
        dev = _records(gpu, chipsim.ops.softmax, shape)
        return dev.sim.cycles / (shape[0] * shape[1])

    short, long = us_per_byte((65536, 1024)), us_per_byte((2048, 32768))
    assert 1.6 < long / short < 2.4  # 3 reads + 1 write vs 1 + 1 (issue 13, mechanism 3)


def test_sustained_tensor_rate_is_below_peak_and_scales_the_matmul():
    gpu = chipsim.chip(GPU)
    peak = with_fields(gpu, {"tensor_core.sustained_pct": 100})
    t = [
        _records(c, chipsim.ops.matmul, (8192, 8192), (8192, 8192)).sim.cycles for c in (gpu, peak)
    ]
    assert t[0] / t[1] == pytest.approx(100 / gpu.tensor_core.sustained_pct, rel=0.03)


def test_a_contraction_runs_in_waves_of_blocks_over_the_sms():
    gpu = with_fields(chipsim.chip(GPU), {"sm.operand_bytes_per_cycle": 0})  # one block size
    bm, bn, sms = gpu.sm.block_rows, gpu.sm.block_cols, gpu.sm.count

    def tensor_cycles(chip, m):
        recs = _records(chip, chipsim.ops.matmul, (m, 1024), (1024, bn)).sim.records
        return sum(r.cycles for r in recs if r.instr.unit == "tensor")

    full, one_more = tensor_cycles(gpu, bm * sms), tensor_cycles(gpu, bm * (sms + 1))
    assert one_more / full == pytest.approx(2.0, rel=0.01)  # one block more: a whole wave more
    edge = chipsim.chip("edge-npu")  # no SMs: time grows with the work, 109/108
    assert edge.sm.count == 0
    ratio = tensor_cycles(edge, bm * (sms + 1)) / tensor_cycles(edge, bm * sms)
    assert ratio == pytest.approx((sms + 1) / sms, rel=0.01)


def _tensor_cycles(chip, m, n, k):
    recs = _records(chip, chipsim.ops.matmul, (m, k), (k, n)).sim.records
    return sum(r.cycles for r in recs if r.instr.unit == "tensor")


def test_a_small_gemm_takes_one_blocks_time_not_a_share_of_every_sm():
    """Issue 25: 16 x 1024 x 1024 has 16 blocks at most for 108 SMs; each block multiplies at
    one SM's rate and loads its operand panels through one SM's load path."""
    gpu = chipsim.chip(GPU)
    sm, tc = gpu.sm, gpu.tensor_core
    macs_per_sm = 4 * 4 * 4 * tc.count / sm.count
    m, n, k = 16, 1024, 1024

    def tile_cycles(bm, bn):
        waves = -(-(-(-m // bm) * -(-n // bn)) // sm.count)
        per_k = max(min(m, bm) * min(n, bn) / macs_per_sm,
                    (min(m, bm) + min(n, bn)) * 2 / sm.operand_bytes_per_cycle)  # fmt: skip
        return waves * (sm.block_fixed_cycles + k * per_k)

    halves = ((sm.block_rows, sm.block_rows // 2), (sm.block_cols, sm.block_cols // 2))
    best = min(tile_cycles(bm, bn) for bm in halves[0] for bn in halves[1])
    cycles = _tensor_cycles(gpu, 16, 1024, 1024)
    assert cycles == pytest.approx(best * 100 / tc.sustained_pct, rel=0.02)
    spread = 16 * 1024 * 1024 / (macs_per_sm * sm.count)  # every SM busy: what it is not
    assert cycles > 10 * spread


def test_tensor_efficiency_follows_the_shape():
    """Large square GEMMs reach most of the peak; skinny ones little of it."""
    gpu = chipsim.chip(GPU)
    peak = 4 * 4 * 4 * gpu.tensor_core.count

    def efficiency(m, n, k):
        return m * n * k / peak / _tensor_cycles(gpu, m, n, k)

    assert efficiency(4096, 4096, 4096) > 0.8
    assert efficiency(64, 4096, 4096) < 0.5 * efficiency(4096, 4096, 4096)
