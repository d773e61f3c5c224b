"""``python -m chipsim plan-memory IN.csv --strategy NAME [-o OUT.csv] [--alignment 64]``.

Reads buffers (``id,lower,upper,size``, lifetimes half-open ``[lower, upper)``), plans them,
validates the plan, writes ``id,lower,upper,size,offset`` and prints the arena size, the lower
bound and their ratio. Errors go to stderr with exit code 2 and no traceback.
Until the main CLI is wired, run it as ``python -m chipsim.cli.plan_memory IN.csv ...``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from chipsim.errors import ChipsimError
from chipsim.passes.memory import (
    PLANNERS,
    get_planner,
    read_records_csv,
    validate_plan,
    write_plan_csv,
)
from chipsim.passes.memory.plan import format_bytes

HELP = "plan tensor offsets in one arena from a CSV of buffers"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``plan-memory`` subcommand on ``subparsers``."""
    parser = subparsers.add_parser("plan-memory", help=HELP, description=HELP)
    _add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="IN.csv", help="buffers: columns id,lower,upper,size")
    parser.add_argument(
        "--strategy", default="greedy_by_size", help=f"planner: {', '.join(PLANNERS)}"
    )
    parser.add_argument("-o", "--output", metavar="OUT.csv", help="write the plan here")
    parser.add_argument("--alignment", type=int, default=64, help="offset alignment in bytes")
    parser.add_argument("--seed", type=int, default=0, help="seed of the search planner")


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return the exit code (0 ok, 2 bad input)."""
    try:
        path = Path(args.input)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise ChipsimError(f"cannot read {path}: {err.strerror}") from None
        records = read_records_csv(text, source=str(path))
        planner = get_planner(args.strategy)
        kwargs = {"seed": args.seed} if planner is PLANNERS["search"] else {}
        plan = validate_plan(planner(records, alignment=args.alignment, **kwargs))
        if args.output:
            Path(args.output).write_text(write_plan_csv(plan), encoding="utf-8")
    except ChipsimError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    lb = plan.lower_bound
    print(f"strategy:    {plan.strategy} ({len(records)} buffers, alignment {plan.alignment} B)")
    print(f"arena:       {plan.arena_size} B ({format_bytes(plan.arena_size)})")
    print(f"lower bound: {lb} B ({format_bytes(lb)})")
    print(f"ratio:       {plan.arena_size / lb:.3f}" if lb else "ratio:       -")
    if args.output:
        print(f"wrote {args.output}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point: ``python -m chipsim.cli.plan_memory IN.csv ...``."""
    parser = argparse.ArgumentParser(prog="chipsim plan-memory", description=HELP)
    _add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
