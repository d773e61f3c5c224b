"""The eager ChipDevice and its Report."""

import matplotlib
import numpy as np
import pytest

import chipsim
from chipsim.errors import OutOfMemoryError
from chipsim.ir import GraphBuilder, f32, interpret
from chipsim.runtime import ChipDevice, make_device

matplotlib.use("Agg")


def _graph():
    b = GraphBuilder()
    x, w, c = b.input((40, 24), f32), b.input((24, 16), f32), b.input((16,), f32)
    h = b.op("matmul", x, w)
    y = b.op("softmax", b.op("relu", b.op("add", h, c)))
    return b.build(y)


def _run_nodes(dev, g, args):
    env = {v: dev.upload(a, v.type) for v, a in zip(g.inputs, args, strict=True)}
    for n in g.nodes:
        env[n.output] = dev.run(n, [env[v] for v in n.inputs])
    return dev.download(env[g.outputs[0]], g.outputs[0].type)


def test_device_protocol_matches_interpreter():
    g = _graph()
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(v.shape).astype(np.float32) for v in g.inputs]
    dev = make_device("edge-npu")
    out = _run_nodes(dev, g, args)
    np.testing.assert_allclose(out, interpret(g, *args)[0], rtol=1e-5, atol=1e-7)
    rep = dev.report
    assert [k.name for k in rep.kernels] == ["matmul", "add", "relu", "softmax"]
    assert rep.kernel("matmul").units == ("tensor", "dma")
    assert rep.kernel("softmax").units == ("alu", "simd", "dma")
    assert rep.unit_busy["host"] == 4 * dev.chip.launch.eager_cycles
    assert 0 < rep.utilization["tensor"] < 1 and rep.bytes_moved["dram"] > 0
    assert rep.total_energy_pj > 0 and rep.peak_bytes["dram"] >= 2 * 2**20
    text = str(rep)
    assert "matmul" in text and "cycles" in text and "<table>" in rep._repr_html_()


def test_same_program_same_cycles_twice():
    g = _graph()
    args = [np.ones(v.shape, np.float32) for v in g.inputs]
    a, b = make_device("edge-npu"), make_device("edge-npu")
    _run_nodes(a, g, args)
    _run_nodes(b, g, args)
    assert a.cycles == b.cycles and a.report.cycles == a.cycles


def test_eager_tensors_through_the_front_end_and_refcount_frees():
    with make_device("edge-npu") as dev:
        assert chipsim.current_device() is dev
        x = chipsim.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
        y = chipsim.ops.relu(chipsim.ops.reshape(x, (4, 3)) - 5.0)
        expected = np.maximum(np.arange(12, dtype=np.float32).reshape(4, 3) - 5, 0)
        np.testing.assert_array_equal(y.numpy(), expected)
        live = dev.allocator.allocated_bytes
        del y
        assert dev.allocator.allocated_bytes < live  # Python refcounting drove the free
    assert [k.name for k in dev.report.kernels] == ["sub", "relu"]  # reshape is a free view


def test_out_of_memory_says_how_much_was_fragmented():
    dev = ChipDevice("edge-npu", functional=False)
    b = GraphBuilder()
    t = b.input((4 * 2**20,), f32)  # 16 MiB each; DRAM is 64 MiB
    bufs = [dev.upload(None, t.type) for _ in range(3)]
    dev.release(bufs[1], t.type)
    with pytest.raises(OutOfMemoryError, match="free but fragmented"):
        dev.upload(None, b.input((8 * 2**20,), f32).type)


def test_plots_have_one_row_per_unit_and_a_dot_per_kernel():
    dev = make_device("edge-npu")
    g = _graph()
    _run_nodes(dev, g, [np.ones(v.shape, np.float32) for v in g.inputs])
    ax = dev.report.timeline()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["kernel", "Launch", "ALU", "MAC array", "SIMD", "Tensor Core", "DMA"]
    ax = dev.report.roofline()
    dots = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert len(dots) == 4
    matplotlib.pyplot.close("all")
