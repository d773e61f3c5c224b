"""The published A100 measurements: every row traceable, derived times checked, split rule."""

import math

import pytest

from chipsim.calibration import load_measurements, load_sources, read_measurements, split
from chipsim.calibration.measurements import A100_CSV, COLUMNS, write_measurements
from chipsim.errors import SerializationError

ROWS = load_measurements()


def test_84_rows_four_op_classes_with_their_dtypes():
    counts = {
        op: sum(r.op == op for r in ROWS) for op in ("matmul", "softmax", "layernorm", "gelu")
    }
    assert counts == {"matmul": 20, "softmax": 22, "layernorm": 22, "gelu": 20}
    assert {r.dtype for r in ROWS if r.op == "matmul"} == {"bf16"}
    assert {r.dtype for r in ROWS if r.op != "matmul"} == {"f16"}
    calls = {op: {r.call for r in ROWS if r.op == op} for op in counts}
    assert calls == {
        "matmul": {"cublas"},
        "softmax": {"aten"},
        "layernorm": {"compiled"},
        "gelu": {"compiled"},
    }


def test_every_row_cites_a_listed_source_and_says_where_and_how():
    sources = load_sources()
    for r in ROWS:
        assert r.source in sources, r.label
        assert sources[r.source]["url"].startswith("https://")
        assert r.where and r.timed and r.derivation and r.published, r.label
        assert "real_hardware" in r.where and "Fig. 5" in r.where, r.label


def test_latencies_as_published_and_throughputs_converted_exactly():
    for r in ROWS:
        if r.op == "matmul":  # "0.1900ms (101.7124Tflops)": the latency column, in us
            assert r.derivation.startswith("as published")
            ms = float(r.published.split("ms")[0])
            assert r.time_us == pytest.approx(ms * 1000, abs=1e-9)
            # the source's own TFLOP/s column agrees with 2MNK / latency
            (m, k), (_, n) = r.shapes
            tflops = float(r.published.split("(")[1].split("Tflops")[0])
            assert 2 * m * n * k / (r.time_us * 1e-6) / 1e12 == pytest.approx(tflops, rel=2e-3)
        else:  # "9.99 Gelem/s": time = elements / throughput
            assert r.derivation.startswith("elements / published throughput")
            gelem = float(r.published.split()[0])
            assert r.time_us == pytest.approx(r.elements / (gelem * 1e3), abs=6e-4)


def test_derived_times_sit_on_the_source_timer_grid():
    # time.time() near 1.7e9 s resolves 2**-22 s; a median of 50 averages two samples
    quantum_us = 2**-23 * 1e6
    for r in ROWS:
        if r.op != "matmul":
            steps = r.time_us / quantum_us
            assert abs(steps - round(steps)) < 0.01, r.label


def _swept(r):
    family = r.family
    if family == "matmul-M" or family.endswith("-M"):
        return r.shapes[0][0]
    if family == "matmul-NK":
        return r.shapes[1][1]
    if family.endswith("-N"):
        return r.shapes[0][1]
    return r.shapes[0][0]  # gelu-n


def test_split_rule_odd_log2_of_the_swept_dimension_is_held_out():
    for r in ROWS:
        n = _swept(r)
        assert n & (n - 1) == 0, r.label
        assert r.set == ("heldout" if int(math.log2(n)) % 2 else "fit"), r.label
    for which in ("fit", "heldout"):
        assert {r.op for r in split(ROWS, which)} == {"matmul", "softmax", "layernorm", "gelu"}


def test_csv_round_trip():
    assert read_measurements(write_measurements(ROWS)) == ROWS


def test_errors_name_the_line_and_the_fix(tmp_path):
    header = ",".join(COLUMNS)
    good = "gelu,g,1024,f16,compiled,48.2,x,y,z,llmcompass,w,fit"
    with pytest.raises(SerializationError, match="missing column.*set"):
        read_measurements(header.replace(",set", "") + "\n" + good.rsplit(",", 1)[0], "m.csv")
    with pytest.raises(SerializationError, match=r"m.csv:3: .*shape"):
        read_measurements(f"{header}\n{good}\n{good.replace('1024', '1024xq')}", "m.csv")
    with pytest.raises(SerializationError, match=r"m.csv:2: set must be one of fit, heldout"):
        read_measurements(f"{header}\n{good.replace(',fit', ',train')}", "m.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text(f"{header}\n{good.replace('llmcompass', 'nowhere')}\n")
    with pytest.raises(SerializationError, match="'nowhere'.*sources.csv"):
        load_measurements(bad)


def test_the_shipped_file_documents_its_split_rule():
    head = A100_CSV.read_text().splitlines()[:12]
    assert any("Split rule" in line for line in head)
