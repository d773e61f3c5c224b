"""The ``python -m chipsim`` command line: one subcommand per module in this package.

Example:
    python -m chipsim plan-memory buffers.csv --strategy greedy_by_size -o plan.csv
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from chipsim.cli import calibrate, plan_memory

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m chipsim", description="chipsim: graphs mapped onto a simulated chip"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    plan_memory.add_parser(sub)
    calibrate.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return int(args.func(args))
