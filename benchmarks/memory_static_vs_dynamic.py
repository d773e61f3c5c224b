"""Benchmark: static memory plans vs the eager caching allocator (chipsim.workloads.memory).

    .venv/bin/python benchmarks/memory_static_vs_dynamic.py

Prints one table row per workload (bytes are deterministic) and the eager out-of-memory
message of the small-DRAM case.
"""

from __future__ import annotations

from chipsim.workloads.memory import inference_service, out_of_memory_case, training_loop


def mib(n: int) -> str:
    return f"{n / 2**20:.2f}"


def main() -> None:
    cases = [training_loop(), inference_service(), out_of_memory_case()]
    print(
        "| workload | chip | eager allocated peak MiB | eager reserved peak MiB "
        "| eager max fragmentation | static MiB (weights + I/O + arena) | static DRAM peak MiB "
        "| static / eager reserved | static / eager allocated | eager OOM |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for c in cases:
        d = c.as_dict()
        s = c.static
        print(
            f"| {c.workload} | {c.chip} | {mib(d['eager_peak_allocated'])} "
            f"| {mib(d['eager_peak_reserved'])} | {d['eager_max_fragmentation']:.2f} "
            f"| {mib(s.total_bytes)} ({mib(s.weights_bytes)} + {mib(s.io_bytes)} + "
            f"{mib(s.arena_bytes)}) | {mib(s.dram_peak)} | {d['static_over_eager_reserved']:.2f} "
            f"| {d['static_over_eager_allocated']:.2f} "
            f"| {'yes, request ' + str(d['served_eagerly']) if c.eager.oom else 'no'} |"
        )
    print()
    for c in cases:
        print(f"{c.workload}: {c.details}")
    print()
    print("eager OOM message:", cases[2].eager.oom)


if __name__ == "__main__":
    main()
