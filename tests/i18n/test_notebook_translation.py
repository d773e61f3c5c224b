"""Markdown cells of a downloaded chapter, translated block by block with the page's catalogue."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))
from notebook_translation import translate_markdown  # noqa: E402

CATALOGUE = {
    "Learning goals": "学习目标",
    "A paragraph on two lines of source.": "两行源码的一段话。",
    "an item that also wraps": "一个也会换行的列表项",
    "A heading": "一个标题",
    "1. A question?": "1\\. 一个问题？",
    "The answer, with {glue:text}`speedup:.1f` in it.": "答案，其中有 {glue:text}`speedup:.1f`。",
    "when": "何时",
    "eager": "动态图",
    "A quoted line.": "引用的一行。",
    "A note right under its option line.": "紧跟在选项行下面的注释。",
}


def lookup(msgid: str) -> str | None:
    return CATALOGUE.get(msgid)


def test_blocks_are_translated_and_their_markup_kept():
    source = textwrap.dedent(
        """\
        # A heading

        :::{admonition} Learning goals
        A paragraph on two
        lines of source.

        - an item that
          also wraps
        - an item nobody translated
        :::

        :::{admonition} 1. A question?
        :class: dropdown

        The answer, with {glue:text}`speedup:.1f` in it.
        :::

        :::{admonition} A heading
        :class: note
        A note right under
        its option line.
        :::

        | | eager | static |
        |---|---|---|
        | when | now | later |

        > A quoted line.

        ```python
        A heading
        ```
        """
    )
    assert translate_markdown(source, lookup) == textwrap.dedent(
        """\
        # 一个标题

        :::{admonition} 学习目标
        两行源码的一段话。

        - 一个也会换行的列表项
        - an item nobody translated
        :::

        :::{admonition} 1\\. 一个问题？
        :class: dropdown

        答案，其中有 {glue:text}`speedup:.1f`。
        :::

        :::{admonition} 一个标题
        :class: note
        紧跟在选项行下面的注释。
        :::

        | | 动态图 | static |
        |---|---|---|
        | 何时 | now | later |

        > 引用的一行。

        ```python
        A heading
        ```
        """
    )


@pytest.mark.parametrize("source", ["", "Nothing to translate here.\n", "(label)=\n## Title\n"])
def test_text_without_translations_is_unchanged(source):
    assert translate_markdown(source, lookup) == source
