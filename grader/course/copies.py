"""Is a learner's function a copy of a reference implementation, pasted from the package?

Token for token, with every name, string and number made anonymous (:func:`code_tokens`), so a
copy that renames things is still one; honest solutions of the same algorithm stay well below
:data:`COPY_SIMILARITY`. The grader flags a copy for the instructor only when the answers are
also the reference's on every hidden instance (:mod:`grader.course.rescore`); a flag never
changes a score.

Example:
    >>> code_tokens("total = x + 1")
    ['ID', '=', 'ID', '+', 'LIT']
    >>> list(functions_of("def f(a):\\n    return a\\n"))
    ['f']
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from grader.course.static_check import parse

#: A learner's function this similar to a reference implementation (tokens, names and
#: literals aside) is a copy; honest solutions of the same algorithm stay well below (the
#: course's own model solutions: at most 0.88).
COPY_SIMILARITY = 0.95
#: Functions shorter than this (in tokens) are too short to call copied.
COPY_MIN_TOKENS = 60


def code_tokens(source: str) -> list[str]:
    """``source``'s tokens with every name, string and number made anonymous: what stays the
    same when a copy renames things."""
    import io
    import keyword
    import tokenize

    out: list[str] = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(source).readline):
            if t.type == tokenize.NAME:
                out.append(t.string if keyword.iskeyword(t.string) else "ID")
            elif t.type in (tokenize.STRING, tokenize.NUMBER):
                out.append("LIT")
            elif t.type == tokenize.OP:
                out.append(t.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def functions_of(source: str) -> dict[str, str]:
    """The source of each function a cell (or module) defines, by name."""
    tree = parse(source)
    if tree is None:
        return {}
    lines = source.splitlines()
    return {
        node.name: "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def copied_from(sources: Iterable[str], references: dict[str, str]) -> tuple[str, str, float]:
    """The learner's function most like one of ``references`` (name -> source): ``(theirs,
    reference, similarity)``; similarity 0 when nothing is long enough to compare."""
    import difflib

    best = ("", "", 0.0)
    refs = {k: code_tokens(v) for k, v in references.items()}
    refs = {k: v for k, v in refs.items() if len(v) >= COPY_MIN_TOKENS}
    for source in sources:
        for name, body in functions_of(source).items():
            mine = code_tokens(body)
            if len(mine) < COPY_MIN_TOKENS:
                continue
            for ref, theirs in refs.items():
                if not 0.7 < len(mine) / len(theirs) < 1.4:
                    continue
                ratio = difflib.SequenceMatcher(None, mine, theirs, autojunk=False).ratio()
                if ratio > best[2]:
                    best = (name, ref, ratio)
    return best
