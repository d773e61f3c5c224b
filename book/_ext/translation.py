"""The Sphinx side of the book's editions (``locales/editions.yml``, ``locales/editions.py``).

Every edition is this same book built with another ``language``; this extension adds what
Sphinx's gettext translation does not do by itself:

* a language switch on every page that leads to the same page -- and the same section -- of
  the other editions, plus ``<link rel="alternate" hreflang=...>`` for search engines;
* the chapters' code runs in the page's language: ``CHIPSIM_LANG`` is set for the kernels,
  so figure labels drawn through ``chipsim.i18n.tr`` follow the edition;
* the part captions of ``_toc.yml`` are translated (sphinx-external-toc inserts its toctrees
  after Sphinx's translation step, which therefore never sees them);
* a translation that Sphinx could not use is a warning, so the strict build fails instead of
  quietly showing English: Sphinx keeps a translation only if it parses as one paragraph, so
  a title translated as "1. ..." (a Markdown list) was dropped without a word;
* a page whose translation is unfinished says so at its top;
* the chapter offered for download is the edition's notebook: Markdown translated, and a first
  cell that sets chipsim's language (``notebook_translation.py``);
* Chinese search finds glossary terms: each Chinese term of the glossary becomes a word for
  jieba (Sphinx's Chinese word splitter), so "内存规划" is indexed as one word;
* what the theme and Sphinx write around a page (the search box, buttons, tooltips, labels
  for screen readers) comes from ``locales/<language>/theme.po`` where that catalogue has it,
  ahead of the translations the theme ships.
"""

from __future__ import annotations

import gettext
import logging
import os
import re
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util import logging as sphinx_logging
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import extract_messages

logger = sphinx_logging.getLogger(__name__)

CJK = re.compile(r"[\u3400-\u9fff]")


def _editions(app: Sphinx) -> list[dict[str, Any]]:
    path = Path(app.srcdir) / "locales" / "editions.yml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))["editions"]


def _this_edition(app: Sphinx) -> dict[str, Any]:
    language = app.config.language or "en"
    for edition in _editions(app):
        if edition["language"] == language:
            return edition
    raise ValueError(f"language {language!r} is not an edition of locales/editions.yml")


def _catalog(transform: SphinxTransform):
    """The page's translations (a gettext object), as Sphinx's Locale transform loads them."""
    config, env = transform.config, transform.env
    domain = docname_to_domain(env.docname, config.gettext_compact)
    dirs = [os.path.join(env.srcdir, d) for d in config.locale_dirs]
    catalog, found = init_locale(dirs, config.language, domain)
    return catalog if found else None


def _is_english(config: Any) -> bool:
    return (config.language or "en").split("_")[0] == "en"


class TranslateTocCaptions(SphinxTransform):
    """Translate toctree captions (e.g. the parts of ``_toc.yml``) with the page's catalogue."""

    default_priority = 101  # right after sphinx-external-toc's InsertToctrees (100)

    def apply(self, **kwargs: Any) -> None:
        if _is_english(self.config) or (catalog := _catalog(self)) is None:
            return
        for toctree in self.document.findall(addnodes.toctree):
            for message in toctree.extract_original_messages():
                translated = catalog.gettext(message)
                if translated and translated != message:
                    toctree.apply_translated_message(message, translated)


def _messages(doctree: nodes.Node):
    """The page's translatable messages, as the gettext builder extracts them."""
    for node, message in extract_messages(doctree):
        if not isinstance(node, (addnodes.translatable, nodes.image)):
            yield node, message  # those two are translated in place and never marked


class CheckTranslationsApplied(SphinxTransform):
    """Warn about translations that Sphinx dropped instead of showing them."""

    default_priority = 24  # after Sphinx's Locale (20)

    def apply(self, **kwargs: Any) -> None:
        if _is_english(self.config) or (catalog := _catalog(self)) is None:
            return
        for node, message in _messages(self.document):
            if node.get("translated"):
                continue
            text = catalog.gettext(message)
            if text and text != message:
                logger.warning(
                    "translation not used: Sphinx keeps a translation only if it reads as one "
                    "paragraph, and this one reads as a list, heading or block (a leading "
                    "'1. ', '- ', '#' or '>'? escape it: '1\\. '): %r",
                    text[:120],
                    location=node,
                    type="i18n",
                    subtype="unused",
                )


#: CJK scripts: a message containing them is not English source text.
_ALREADY_TRANSLATED = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef]")


def _is_prose(message: str) -> bool:
    """English words to translate: not in a CJK script, and two words outside roles and code."""
    if _ALREADY_TRANSLATED.search(message):
        return False
    words = re.sub(r"(\{[\w:-]+\}|:[\w:-]+:)`[^`]*`|``[^`]*``|`[^`]*`", " ", message)
    return bool(re.search(r"[A-Za-z]{2,}\s+[A-Za-z]{2,}", words))


def add_untranslated_notice(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: a note at the top of a page that is not translated yet."""
    if _is_english(app.config):
        return
    # Counted on the finished page: the front matter's fields, which are messages while the
    # page is read, are gone by now, as they are from the gettext templates.
    # Text Sphinx itself wrote in the edition's language (autodoc's "Parameters", "Bases: ...")
    # and bare names (autosummary's rows, type names) are no English waiting for a translation.
    # A message the catalogue keeps as it is (msgstr == msgid, e.g. a sentence whose
    # cross-references only resolve in the original) is translated on purpose.
    config = app.config
    domain = docname_to_domain(docname, config.gettext_compact)
    dirs = [os.path.join(app.srcdir, d) for d in config.locale_dirs]
    catalog, found = init_locale(dirs, config.language, domain)
    kept = getattr(catalog, "_catalog", {}) if found else {}
    marks = [
        bool(node.get("translated")) or kept.get(message) == message
        for node, message in _messages(doctree)
        if node.get("translated") or _is_prose(message)
    ]
    translated, total = sum(marks), len(marks)
    template = _this_edition(app).get("untranslated_notice", "")
    if not template or translated >= total:
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return
    note = nodes.note(classes=["translation-notice"])
    note += nodes.paragraph(text=template.format(translated=translated, total=total))
    section.insert(1, note)  # after the page title


def add_language_switch(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """``html-page-context``: a header button per other edition, to this page in it."""
    editions = _editions(app)
    this = _this_edition(app)
    up = "../" * (pagename.count("/") + (this["path"].count("/") + 1 if this["path"] else 0))
    buttons = context.setdefault("header_buttons", [])
    links = []
    for edition in editions:
        prefix = f"{edition['path'].strip('/')}/" if edition["path"] else ""
        url = f"{up}{prefix}{pagename}.html"
        tag = edition["language"].replace("_", "-")
        links.append(f'<link rel="alternate" hreflang="{tag}" href="{url}" />')
        if edition["language"] == this["language"]:
            continue
        # the tooltip speaks the page's language: "switch_tooltips" of this edition, by target
        tooltip = this.get("switch_tooltips", {}).get(edition["language"])
        buttons.append(
            {
                "type": "link",
                "url": url,
                "text": edition["name"],
                "tooltip": tooltip or edition.get("switch_tooltip", edition["name"]),
                "icon": "fas fa-language",
                "label": f"language-switch btn-language-{tag}",
            }
        )
    context["metatags"] = context.get("metatags", "") + "\n".join(links) + _CJK_STYLE


def translate_downloaded_notebook(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """``html-page-context``, after ipynb_download wrote ``_sources/<page>.ipynb``: in a
    translated edition, its Markdown cells are translated and a first cell sets the language."""
    if _is_english(app.config) or not context.get("ipynb_source"):
        return
    from notebook_translation import translate_notebook

    path = Path(app.outdir) / "_sources" / context["ipynb_source"]
    if not path.is_file():
        return
    edition = _this_edition(app)
    note = edition.get("notebook_note", "")
    setup = (f"# {note}\n" if note else "") + (
        f'from chipsim.i18n import set_language\n\nset_language("{app.config.language}")'
    )
    translate_notebook(path, _po_lookup(app, pagename), setup, app.config.language)


def _po_lookup(app: Sphinx, pagename: str):
    """msgid -> translation of the page's ``.po`` (as written: glue roles in their plain form)."""
    from babel.messages.pofile import read_po

    po = Path(app.srcdir, "locales", app.config.language, "LC_MESSAGES", f"{pagename}.po")
    table: dict[str, str] = {}
    if po.is_file():
        with po.open("rb") as f:
            for m in read_po(f):
                if m.id and isinstance(m.string, str) and m.string and not m.fuzzy:
                    table[m.id] = m.string
    return lambda msgid: table.get(msgid) if table.get(msgid) != msgid else None


# Chinese has no italics: emphasis is shown with emphasis dots (着重号) under the characters.
_CJK_STYLE = """
<style>
  :lang(zh) em { font-style: normal; text-emphasis: filled dot; text-emphasis-position: under; }
  :lang(zh) em code, :lang(zh) em span.pre { text-emphasis: none; }
</style>
"""

# The theme opens header links in a new tab; a language switch should not. Switching keeps the
# section (#anchor: section ids come from the English titles, so they match) and the query.
_SWITCH_JS = """
document.addEventListener("DOMContentLoaded", () => {
  for (const link of document.querySelectorAll("a.btn-language-switch")) {
    link.removeAttribute("target");
    link.addEventListener("click", () => {
      link.href = link.href.split(/[?#]/)[0] + window.location.search + window.location.hash;
    });
  }
});
"""


def chapters_speak_the_language(app: Sphinx, config: Any) -> None:
    """``config-inited``: the kernels that run the chapters inherit the edition's language."""
    os.environ["CHIPSIM_LANG"] = config.language or "en"


def glossary_terms_are_words(app: Sphinx, env: Any) -> None:
    """``env-updated``: teach jieba every Chinese glossary term, before the index is written."""
    if not (app.config.language or "").startswith("zh"):
        return
    import jieba

    jieba.setLogLevel(logging.WARNING)
    for kind, name in env.get_domain("std").objects:
        if kind == "term" and CJK.search(name):
            jieba.add_word(name)


def captions_without_outputs(app: Sphinx) -> None:
    """``builder-inited``: the gettext builder reads the notebooks without running them, so a
    ``{glue:figure}`` has no picture; keep its caption anyway, or it never gets translated."""
    if app.builder.name != "gettext":
        return
    try:
        from myst_nb.ext.glue.directives import PasteFigureDirective
        from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data
    except ImportError:
        return

    class CaptionOnlyFigure(PasteFigureDirective):
        def run(self):
            try:
                retrieve_glue_data(self.document, self.arguments[0])
            except RetrievalError:
                figure = nodes.figure()
                self.set_source_info(figure)
                if self.content:
                    holder = nodes.Element()
                    self.state.nested_parse(self.content, self.content_offset, holder)
                    if holder.children and isinstance(holder[0], nodes.paragraph):
                        first = holder[0]
                        caption = nodes.caption(first.rawsource, "", *first.children)
                        caption.source, caption.line = first.source, first.line
                        figure += caption
                        figure += holder.children[1:]
                return [figure]
            return super().run()

    # the domain exists already (the environment is made before the builder)
    domain = app.env.get_domain("glue")
    domain.directives["figure"] = CaptionOnlyFigure
    domain._directive_cache.pop("figure", None)


def theme_catalogue(srcdir: str | Path, language: str) -> dict[str, str]:
    """``locales/<language>/theme.po``: msgid (``context\x04msgid``) -> translation."""
    po = Path(srcdir, "locales", language, "theme.po")
    if not po.is_file():
        return {}
    from babel.messages.pofile import read_po

    with po.open("rb") as f:
        messages = [m for m in read_po(f) if m.id and m.string and not m.fuzzy]
    return {(f"{m.context}\x04{m.id}" if m.context else m.id): m.string for m in messages}


def search_box_speaks_the_language(app: Sphinx, config: Any) -> None:
    """``config-inited``: the search box's placeholder (a theme option, not a message)."""
    if _is_english(config):
        return
    table = theme_catalogue(app.srcdir, config.language)
    options = config.html_theme_options
    text = options.get("search_bar_text")
    if text in table:
        config.html_theme_options = {**options, "search_bar_text": table[text]}


def theme_speaks_the_language(app: Sphinx) -> None:
    """``builder-inited``: the theme's and Sphinx's own strings, from ``theme.po`` first.

    Sphinx keeps one translator per message domain (``sphinx``: Sphinx and the templates;
    ``booktheme``: sphinx-book-theme's buttons); the entries of ``theme.po`` go in front of
    what those already hold. Templates use the very translator object, so it is updated in
    place.
    """
    if _is_english(app.config):
        return
    table = {
        k: v for k, v in theme_catalogue(app.srcdir, app.config.language).items() if "\x04" not in k
    }
    if not table:
        return
    from sphinx.locale import translators

    # sphinx.locale keys its translators (namespace, catalogue); templates and the theme's
    # Python use the "general" namespace (pydata-sphinx-theme adds its messages to "sphinx")
    for key in [("general", "sphinx"), ("general", "booktheme")]:
        translator = translators.get(key)
        if isinstance(translator, gettext.GNUTranslations):
            translator._catalog.update(table)  # type: ignore[attr-defined]
        else:  # the theme ships nothing for this language
            translators[key] = _Catalogue(table, translator)


class _Catalogue(gettext.NullTranslations):
    """A message table in front of another translator (or of nothing)."""

    def __init__(self, table: dict[str, str], fallback: gettext.NullTranslations | None):
        super().__init__()
        self._table = dict(table)
        if fallback is not None:
            self.add_fallback(fallback)

    def gettext(self, message: str) -> str:
        return self._table.get(message) or super().gettext(message)


#: attributes whose text the theme's templates write as it is, without gettext
LABEL_ATTRIBUTES = ("aria-label", "title", "data-bs-title")


def aria_labels_speak_the_language(app: Sphinx, exception: Exception | None) -> None:
    """``build-finished``: labels the theme's templates write untranslated (``aria-label``,
    and tooltips hard-coded in a template such as "Toggle primary sidebar")."""
    if exception is not None or _is_english(app.config) or app.builder.format != "html":
        return
    table = theme_catalogue(app.srcdir, app.config.language)
    if not table:
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = translate_labels(text, table)
        if new != text:
            page.write_text(new, encoding="utf-8")


def translate_labels(html: str, table: dict[str, str]) -> str:
    """``html`` with each label attribute whose whole text ``table`` has translated: an
    ``aria-label\x04…`` entry for aria labels only, a plain entry for any label attribute."""
    import html as escape

    for key, translated in table.items():
        context, _, english = key.rpartition("\x04")
        names = (context,) if context else LABEL_ATTRIBUTES
        if context and context not in LABEL_ATTRIBUTES:
            continue
        for name in names:
            html = html.replace(
                f'{name}="{escape.escape(english)}"', f'{name}="{escape.escape(translated)}"'
            )
    return html


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", chapters_speak_the_language)
    app.connect("config-inited", search_box_speaks_the_language)
    app.connect("builder-inited", theme_speaks_the_language)
    app.connect("build-finished", aria_labels_speak_the_language)
    app.connect("builder-inited", captions_without_outputs)
    app.add_transform(TranslateTocCaptions)
    app.add_transform(CheckTranslationsApplied)
    app.connect("doctree-resolved", add_untranslated_notice)
    app.connect("env-updated", glossary_terms_are_words)
    app.connect("html-page-context", add_language_switch, priority=502)  # after the theme's 501
    app.connect("html-page-context", translate_downloaded_notebook, priority=502)
    app.add_js_file(None, body=_SWITCH_JS)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
