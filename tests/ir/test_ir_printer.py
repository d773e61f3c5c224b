"""SSA text, the cost table and the HTML view."""

import numpy as np

import chipsim as cs


def f(x):
    y = (x + 1) * 2
    return y


def test_ssa_text_of_a_traced_function():
    g = cs.trace(f, np.zeros((4, 8), np.float32))
    assert str(g) == (
        "f(%0: f32[4, 8]) {\n"
        "  %1 = constant(1.0) : f32[]\n"
        "  %2 = add(%0, %1) : f32[4, 8]\n"
        "  %3 = constant(2.0) : f32[]\n"
        "  %4 = mul(%2, %3) : f32[4, 8]\n"
        "  return %4\n"
        "}"
    )


def test_attributes_print_unless_default():
    b = cs.GraphBuilder()
    x = b.input((2, 3))
    s = b.op("sum", x, axes=(1,), keepdims=False)
    t = b.op("transpose", x)
    c = b.const(np.ones((2, 2), np.float16))
    g = b.build(s, t, c)
    lines = str(g).splitlines()
    assert lines[1] == "  %1 = sum(%0) {axes=(1,)} : f32[2]"
    assert lines[2] == "  %2 = transpose(%0) : f32[3, 2]"
    assert lines[3] == "  %3 = constant(<f16[2, 2] constant>) : f16[2, 2]"
    assert lines[4] == "  return %1, %2, %3"


def test_table_has_cost_columns_and_totals():
    g = cs.trace(f, np.zeros((4, 8), np.float32))
    text = g.table()
    header = text.splitlines()[0].split()
    assert header == ["value", "op", "pattern", "type", "flops", "bytes_read", "bytes_written"]
    rows = [ln.split() for ln in text.splitlines()[2:-1]]
    assert [r[1] for r in rows] == ["constant", "add", "constant", "mul"]
    add = rows[1]
    assert add[-3:] == ["32", "132", "128"]  # 32 adds; reads 128 + 4 bytes, writes 128
    # 64 FLOPs; bytes: (132 + 128) per op, twice
    assert text.splitlines()[-1] == "total: 64 FLOPs, 520 bytes moved by 4 ops"


def test_table_groups_thousands():
    g = cs.trace(lambda a, b: a @ b, np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32))
    assert g.table().splitlines()[-1] == "total: 524,288 FLOPs, 49,152 bytes moved by 1 ops"


def test_repr_html_contains_the_text_and_a_table():
    g = cs.trace(f, np.zeros(4, np.float32))
    html = g._repr_html_()
    assert "<table>" in html and "<th>flops</th>" in html and "<th>bytes_read</th>" in html
    assert "<pre>f(%0: f32[4]) {" in html
    assert html.count("<tr>") == 1 + len(g.nodes)
    assert repr(g) == "<Graph f: 1 inputs, 4 nodes>"
