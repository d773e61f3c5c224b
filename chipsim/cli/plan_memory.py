"""``python -m chipsim plan-memory IN.csv [--strategy NAME] [-o OUT.csv] ...``.

Reads buffers (``id,lower,upper,size``, lifetimes half-open ``[lower, upper)``), plans them,
validates the plan, prints the arena size, the lower bound and their ratio, and the offsets
(or writes them to ``-o``). Errors go to stderr as one line, with exit code 2, no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from chipsim.errors import ChipsimError
from chipsim.passes.memory import (
    DEFAULT_ALIGNMENT,
    PLANNERS,
    get_planner,
    read_records_csv,
    validate_plan,
    write_plan_csv,
)
from chipsim.passes.memory.csv_io import decode_csv_bytes
from chipsim.passes.memory.plan import MemoryPlan, format_bytes
from chipsim.passes.memory.search import DEFAULT_TIME_LIMIT, SearchResult, run_search

HELP = "plan tensor offsets in one arena from a CSV of buffers"

DESCRIPTION = f"""\
Give every buffer an offset in one memory arena so that buffers that are live at the
same time never share a byte, and report the arena size against the lower bound (the
most bytes live at any one time).

IN.csv has a header line naming the columns id, lower, upper, size (any order, any
case; other columns are ignored) and one buffer per line. A buffer is live at the
steps lower <= t < upper: lifetimes are half-open [lower, upper), so a buffer with
upper = 5 and one with lower = 5 may share bytes. Steps are any whole numbers (only
their order matters); sizes are bytes. Files saved by a spreadsheet are fine: UTF-8
with or without a byte-order mark, UTF-16, CRLF line ends, ';' or tab separators,
spaces around fields.

Strategies: {", ".join(PLANNERS)}.
'search' starts from greedy_by_size's plan and looks for smaller ones until
--time-limit seconds have passed (it stops earlier when its plan provably meets the
lower bound); it is never worse than greedy_by_size, whose plan it always completes
first (about a second for 1,000 buffers all live at once, even under a shorter limit).
"""

EPILOG = """\
output: without -o the offsets are printed as a table after the summary; with
-o OUT.csv they are written there as CSV (id,lower,upper,size,offset); with -o - the
CSV goes to stdout and the summary to stderr.

examples:
  python -m chipsim plan-memory buffers.csv
  python -m chipsim plan-memory buffers.csv --strategy search --time-limit 2 -o plan.csv
  python -m chipsim plan-memory buffers.csv -o - > plan.csv
"""

#: Seconds kept back from --time-limit for validating and writing the plan, and for exiting.
RESERVE = 0.25


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``plan-memory`` subcommand on ``subparsers``."""
    parser = subparsers.add_parser(
        "plan-memory",
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "input", metavar="IN.csv", help="buffers: columns id,lower,upper,size; [lower, upper)"
    )
    parser.add_argument(
        "--strategy",
        default="greedy_by_size",
        metavar="NAME",
        help=f"planner: {', '.join(PLANNERS)} (default: greedy_by_size)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT.csv",
        help="write the plan as CSV here ('-' for stdout) instead of printing a table",
    )
    parser.add_argument(
        "--alignment",
        type=int,
        default=DEFAULT_ALIGNMENT,
        metavar="BYTES",
        help=f"offsets are multiples of this, sizes are rounded up to it (default: "
        f"{DEFAULT_ALIGNMENT})",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"search only: return the best plan found by then (default: {DEFAULT_TIME_LIMIT:g})",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="search only: seed of its random choices (default: 0)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return the exit code (0 ok, 2 bad input or unwritable output)."""
    started = time.perf_counter() - _seconds_since_process_start()
    to_stdout = args.output == "-"
    say = (lambda line: print(line, file=sys.stderr)) if to_stdout else print
    try:
        records = _read(Path(args.input))
        planner = get_planner(args.strategy)
        if planner is PLANNERS["search"]:
            limit = DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit
            if not limit > 0:
                raise ChipsimError(
                    f"--time-limit must be a positive number of seconds, got {limit:g}"
                )
            spent = time.perf_counter() - started
            result = run_search(
                records,
                alignment=args.alignment,
                seed=0 if args.seed is None else args.seed,
                time_limit=max(limit - spent - RESERVE, min(limit, RESERVE)),
            )
            plan = validate_plan(result.plan)
        else:
            if args.time_limit is not None or args.seed is not None:
                raise ChipsimError(
                    "--time-limit and --seed apply to --strategy search only, "
                    f"not {args.strategy!r}"
                )
            result = None
            plan = validate_plan(planner(records, alignment=args.alignment))
        if args.output and not to_stdout:
            _write(Path(args.output), write_plan_csv(plan))
    except ChipsimError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for line in _summary(plan, result, time.perf_counter() - started):
        say(line)
    if to_stdout:
        sys.stdout.write(write_plan_csv(plan))
    elif args.output:
        say(f"wrote {len(plan.records)} offsets to {args.output}")
    else:
        say("")
        say(_table(plan))
        say("(save them as CSV with -o OUT.csv)")
    return 0


def _seconds_since_process_start() -> float:
    """Wall seconds since this process started, so that --time-limit also covers Python's
    start-up and chipsim's import (Linux ``/proc``; 0 where it cannot be read)."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # fields from the 3rd on
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        seconds = uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    return seconds if 0.0 <= seconds < 60.0 else 0.0


def _read(path: Path) -> list:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ChipsimError(f"cannot read {path}: {err.strerror or err}") from None
    return read_records_csv(decode_csv_bytes(data, str(path)), source=str(path))


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise ChipsimError(
            f"cannot write the plan to {path}: {err.strerror or err}; choose another -o path"
        ) from None


def _summary(plan: MemoryPlan, result: SearchResult | None, seconds: float) -> list[str]:
    n = len(plan.records)
    lb = plan.lower_bound
    lines = [
        f"strategy:    {plan.strategy} ({n} buffer{'' if n == 1 else 's'}, "
        f"alignment {plan.alignment} B)",
        f"arena:       {_bytes(plan.arena_size)}",
        f"lower bound: {_bytes(lb)}",
        f"ratio:       {plan.arena_size / lb:.3f}" if lb else "ratio:       -",
    ]
    if result is not None:
        if result.stopped_by == "optimal":
            why = "optimal (the arena equals a proven lower bound)"
        else:
            why = f"stopped by the {result.stopped_by}"
            if result.bound > lb:
                why += f"; no plan is smaller than {result.bound} B (proved)"
        lines.append(f"search:      {why}; {seconds:.2f} s in all")
    return lines


def _bytes(n: int) -> str:
    """``1536 B (1.5 KiB)``; just ``192 B`` below a KiB."""
    human = format_bytes(n)
    return f"{n} B" if human == f"{n} B" else f"{n} B ({human})"


def _table(plan: MemoryPlan) -> str:
    """The plan as aligned columns (the plan's own table without its summary line)."""
    return "\n".join(str(plan).splitlines()[1:])


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point: ``python -m chipsim.cli.plan_memory IN.csv ...``."""
    parser = argparse.ArgumentParser(
        prog="python -m chipsim plan-memory",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
