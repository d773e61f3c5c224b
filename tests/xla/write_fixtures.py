"""Write the HLO fixtures of tests/xla/hlo/ with the JAX installed beside this Python.

    python tests/xla/write_fixtures.py tests/xla/hlo

Each file is ``<graph>.jax-<version>.hlo``: the optimised HLO text XLA printed for a book
graph (chipsim's graph after simplification, through ``chipsim.xla.to_jax``). The parser's
tests read the files of two JAX versions, whose HLO is spelled differently; absolute paths in
the source-location metadata are made relative so the files do not name the machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jax
from xla_graphs import compiled_graph, fixture_graphs

from chipsim.xla import compile_xla, to_jax

ROOT = Path(__file__).resolve().parents[2]


def main(out: str) -> None:
    for name in fixture_graphs():
        text = compile_xla(to_jax(compiled_graph(name))).as_text()
        text = text.replace(f"{ROOT}/", "").replace(str(Path(__file__)), Path(__file__).name)
        path = Path(out, f"{name}.jax-{jax.__version__}.hlo")
        path.write_text(text, encoding="utf-8")
        print(path, len(text))


if __name__ == "__main__":
    main(sys.argv[1])
