"""``python -m chipsim calibrate [-o this-cpu.toml] [--quick] [--measurements CSV]``,
and ``python -m chipsim calibrate --a100 [CHIP] [--rows]``.

Without ``--a100``: times this machine with numpy (a few seconds, one core, progress bar on
stderr), fits a ``cpu-simd`` chip to it, writes the chip as TOML (load it with
``chipsim.chip("this-cpu.toml")``) and the timings beside it as CSV, and prints simulated vs
measured times of held-out workloads the fit never saw. ``--measurements`` refits saved
timings instead of measuring, with this machine's L2 size (the same timings on the same
machine always give the same chip).

With ``--a100``: simulates the published A100 per-op measurements on CHIP (default
``datacenter-gpu``) and prints the errors for the fit and held-out rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from chipsim.calibration import evaluate, load_measurements, load_sources, split
from chipsim.calibration.gpu_host import measure_gpu_host
from chipsim.calibration.host import (
    HostCalibration,
    calibrate_host,
    host_chip_toml,
    matmul_flops,
    stream_bandwidth,
)
from chipsim.calibration.host_timing import (
    QUICK,
    core_l2_bytes,
    machine_description,
    measure_host,
)
from chipsim.calibration.measurements import read_measurements, write_measurements
from chipsim.errors import ChipsimError

HELP = "measure this machine and write a calibrated cpu-simd chip (or check a chip vs the A100)"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``calibrate`` subcommand on ``subparsers``."""
    parser = subparsers.add_parser(
        "calibrate",
        help=HELP,
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-o", "--output", default="this-cpu.toml", metavar="CHIP.toml", help="chip file to write"
    )
    quick = f"{len(QUICK['fit'])} + {len(QUICK['heldout'])} workloads, short timings"
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument(
        "--threads", type=int, default=1, help="BLAS threads while timing (0: numpy's default)"
    )
    parser.add_argument(
        "--measurements", metavar="CSV", help="fit these saved timings instead of measuring"
    )
    parser.add_argument(
        "--a100",
        nargs="?",
        const="datacenter-gpu",
        metavar="CHIP",
        help="instead: compare CHIP (default datacenter-gpu) with published A100 measurements",
    )
    parser.add_argument("--rows", action="store_true", help="with --a100: print every row")
    parser.add_argument(
        "--gpu-host",
        action="store_true",
        help="instead: time this machine's GPU host with PyTorch and write it as a host profile "
        "(-o defaults to this-host.toml; load it with chipsim.hw.get_host(path))",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; 0 on success, 2 on bad input (message on stderr)."""
    try:
        if args.a100:
            return _run_a100(args.a100, args.rows)
        if args.gpu_host:
            return _run_gpu_host(args)
        return _run_host(args)
    except ChipsimError as err:
        print(f"calibrate: {err}", file=sys.stderr)
        return 2


def _run_a100(chip: str, rows: bool) -> int:
    measured = load_measurements()
    source = load_sources()["llmcompass"]
    ev = evaluate(chip, measured)
    print(f"{ev.chip} vs {len(measured)} published A100 measurements, one op per row, eager")
    print(f"source: {source['citation'].split('. Real-hardware')[0]}")
    print(f"        {source['url']}\n")
    if rows:
        print(ev.row_table() + "\n")
    print(ev.summary_table())
    verdict = "meets" if ev.meets_target() else "misses"
    print(f"\nheld-out: {verdict} the target (MAPE <= 15%, every class's geomean in [0.85, 1.15])")
    return 0


def _run_gpu_host(args: argparse.Namespace) -> int:
    output = Path("this-host.toml" if args.output == "this-cpu.toml" else args.output)
    host = measure_gpu_host()
    output.write_text(host.to_toml(f"{host.name}: {host.description}"), encoding="utf-8")
    print(f"{host}\nWrote {output} (load it with chipsim.hw.get_host({str(output)!r}))")
    return 0


def _run_host(args: argparse.Namespace) -> int:
    output = Path(args.output)
    saved = output.with_suffix(".csv")
    if args.measurements:
        path = Path(args.measurements)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise ChipsimError(f"cannot read {path}: {err.strerror}") from None
        rows = read_measurements(text, str(path))
        print(
            f"Fitting the timings in {path} ({len(rows)} rows), with this machine's L2 of "
            f"{core_l2_bytes() / 2**20:g} MiB per core"
        )
    else:
        threads = "numpy's default BLAS threads" if args.threads == 0 else f"{args.threads} thread"
        print(f"Timing this machine with numpy ({threads}): {machine_description()}")
        started = time.perf_counter()
        rows = measure_host(quick=args.quick, threads=args.threads)
        print(f"({len(rows)} workloads in {time.perf_counter() - started:.1f} s)")
    if not split(rows, "fit"):
        raise ChipsimError("no rows of set 'fit' to fit the chip to")
    cal = calibrate_host(rows)
    print()
    _print_machine(cal)
    output.write_text(host_chip_toml(cal), encoding="utf-8")
    if not args.measurements or Path(args.measurements).resolve() != saved.resolve():
        saved.write_text(write_measurements(rows), encoding="utf-8")
    print(f"\nFitted chip: {cal.chip}")
    print(f"Wrote {output} (load it with chipsim.chip({str(output)!r})) and the timings {saved}\n")
    print("Held-out workloads (the fit never saw them), measured with numpy vs simulated:")
    print(cal.evaluation.row_table("heldout"))
    print("\n" + cal.evaluation.summary_table())
    print(
        "\nWhat the model leaves out: numpy's malloc gives large freed arrays back to the\n"
        "operating system and pays page faults for fresh ones (workloads with two or more large\n"
        "temporaries alive at once), a caching allocator never does; the caches beyond the L2;\n"
        "BLAS speed varies with shape. Those are the errors above. Other work on the machine\n"
        "slows every call longer than a scheduler slice: calibrate on an idle machine."
    )
    return 0


def _print_machine(cal: HostCalibration) -> None:
    print("This machine, as numpy sees it (best of several calls):")
    for r in cal.rows:
        if r.op == "add" and r.elements == 1:
            print(f"  per-call overhead      {r.time_us:9.2f} us      (add on 1 element)")
        if r.op == "exp" and r.set == "fit":
            rate = r.elements / (r.time_us * 1e-6) / 1e9
            print(f"  exp in cache           {rate:9.2f} Gelem/s (f32 {r.shape_text})")
    l2 = cal.chip.l2.capacity_bytes
    for shape, moved, bw in stream_bandwidth(cal.rows):
        where = "in the L2" if moved <= l2 else "from DRAM"
        print(f"  bandwidth {where:<12} {bw / 1e9:9.2f} GB/s    (add on {shape}, 3 arrays moved)")
    print(f"  L2 per core            {l2 / 2**20:9.2f} MiB     (as the machine reports it)")
    for shape, flops in matmul_flops(cal.rows):
        print(f"  matmul                 {flops / 1e9:9.2f} GFLOP/s (f32 {shape})")
