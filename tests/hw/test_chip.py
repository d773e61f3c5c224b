"""Chip descriptions: presets, derived peaks, file loading and errors that name the field."""

import json

import pytest

from chipsim.errors import ChipConfigError
from chipsim.hw import Chip, get_chip, list_chips
from chipsim.hw.chip import PRESET_DIR, _mini_toml


def test_presets_exist():
    assert list_chips() == ["cpu-simd", "datacenter-gpu", "edge-npu"]


def test_edge_npu_fields_the_course_relies_on():
    c = get_chip("edge-npu")
    assert (c.name, c.simd.lanes, c.tensor_core.tile) == ("edge-npu", 8, (4, 4, 4))
    assert 128 * 2**10 <= c.sram.capacity_bytes <= 1024 * 2**10
    assert 10 * 2**20 <= c.dram.capacity_bytes <= 100 * 2**20
    assert c.registers.capacity_bytes > 0 and c.clock_hz == 10**9


def test_datacenter_gpu_matches_a100_figures():
    c = get_chip("datacenter-gpu")
    assert c.tensor_flops_per_cycle * c.clock_hz == pytest.approx(312e12, rel=0.01)
    assert c.vector_flops_per_cycle * c.clock_hz == pytest.approx(19.5e12, rel=0.01)
    assert c.dram_bandwidth == pytest.approx(2.04e12, rel=0.02)
    assert c.l2.capacity_bytes == 40 * 2**20 and c.l2.bytes_per_cycle > c.dram.bytes_per_cycle
    # the SRAM is the SMs' shared memory summed: each block's budget is one SM's
    assert c.sram.capacity_bytes == c.sm.count * c.sm.shared_bytes
    assert 5e-6 <= c.launch.eager_cycles / c.clock_hz <= 15e-6  # ATen dispatch, fitted
    assert c.launch.eager_cycles < c.launch.library < c.launch.compiled  # cuBLAS, torch.compile
    assert c.sm.count == 108 and c.sm.shared_bytes == 164 * 1024
    assert c.launch.graph_cycles / c.clock_hz == pytest.approx(1e-6, rel=0.01)


def test_every_preset_cites_energy_source():
    for name in list_chips():
        assert "Horowitz" in get_chip(name).energy.source


def test_chip_is_frozen():
    with pytest.raises(AttributeError):
        get_chip("edge-npu").clock_hz = 5  # type: ignore[misc]


def test_mini_toml_parser_agrees_with_tomllib():
    import tomllib

    for path in PRESET_DIR.glob("*.toml"):
        text = path.read_text()
        assert _mini_toml(text, str(path)) == tomllib.loads(text)


def test_json_roundtrip(tmp_path):
    c = get_chip("cpu-simd")
    path = tmp_path / "c.json"
    path.write_text(json.dumps(c.to_dict()))
    assert Chip.from_file(path) == c


def test_bad_field_is_named(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\n[sram]\ncapacity_bytes = -3\n')
    with pytest.raises(
        ChipConfigError,
        match=r"sram.capacity_bytes: expected a positive int, "
        r"got -3",
    ):
        Chip.from_file(path)


def test_unknown_field_and_chip(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"dram": {"speed": 3}}')
    with pytest.raises(ChipConfigError, match="dram.speed"):
        Chip.from_file(path)
    with pytest.raises(ChipConfigError, match="edge-npu"):
        get_chip("no-such-chip")


# -- issue 16 item 1: the unit (and rate) of a contraction follows its dtype ---------------------


def _eager_matmul(chip, dtype, n=4096):
    """Simulated seconds and units of one eager (n, n) x (n, n) matmul, timing only."""
    import numpy as np

    import chipsim

    dev = chipsim.device(chip, functional=False)
    t = chipsim.TensorType((n, n), getattr(chipsim, dtype))
    a = chipsim.Tensor(dev.upload(np.empty(0), t), t, dev)
    with dev:
        out = chipsim.ops.matmul(a, a)
        del out
    units = {r.instr.unit for r in dev.sim.records}
    start = min(r.start for r in dev.sim.records if r.instr.unit != "host")
    return (dev.sim.cycles - start) / dev.chip.clock_hz, units, 2 * n**3


def test_f32_gemm_on_the_gpu_runs_on_cuda_cores_not_tensor_cores():
    gpu = get_chip("datacenter-gpu")
    assert gpu.contraction_unit("f32") == "mac" and gpu.contraction_unit("bf16") == "tensor"
    seconds, units, flops = _eager_matmul(gpu, "f32")
    assert "mac" in units and "tensor" not in units
    assert 10e12 < flops / seconds <= 19.5e12  # CUDA-core f32 peak (A100 whitepaper)
    seconds16, units16, _ = _eager_matmul(gpu, "bf16")
    assert "tensor" in units16 and flops / seconds16 > 100e12


def test_tf32_is_an_explicit_opt_in_at_half_the_fp16_rate():
    gpu = get_chip("datacenter-gpu")
    tf32 = gpu.with_tf32()
    assert not gpu.tensor_core.allow_tf32 and tf32.contraction_unit("f32") == "tensor"
    seconds, units, flops = _eager_matmul(tf32, "f32")
    assert "tensor" in units and 40e12 < flops / seconds <= 156e12  # TF32 dense peak
    with pytest.raises(ChipConfigError, match="no TF32 mode"):
        get_chip("edge-npu").with_tf32()


def test_edge_npu_tensor_core_takes_every_float_type_integers_go_to_the_mac_array():
    npu = get_chip("edge-npu")
    assert npu.tensor_core.dtypes == ("f16", "bf16", "f32")
    assert [npu.contraction_unit(d) for d in ("f32", "f16", "i8")] == ["tensor", "tensor", "mac"]


def test_tensor_core_dtypes_are_checked(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[tensor_core]\ndtypes = ["f16", "fp8"]\n')
    with pytest.raises(ChipConfigError, match=r"tensor_core.dtypes: expected a list of dtype"):
        Chip.from_file(path)
    path.write_text("[tensor_core]\nallow_tf32 = 1\n")
    with pytest.raises(ChipConfigError, match=r"tensor_core.allow_tf32: expected true or false"):
        Chip.from_file(path)
