"""The catalogue tools of locales/catalogues.py, on made-up messages: each check must catch
what it is there for."""

from __future__ import annotations


def test_markup_check_catches_a_lost_glued_value_or_reference(catalogues):
    check = catalogues.markup_problems
    source = "It runs {glue:text}`speedup:.1f` times faster, see {doc}`pitfalls`."
    assert check(source, "快了 {glue:text}`speedup:.1f` 倍，参见{doc}`pitfalls`。") == []
    assert check(source, "快了很多倍，参见{doc}`pitfalls`。")  # the number is gone
    assert check(source, "快了 {glue:text}`speedup:.1f` 倍。")  # the link is gone
    assert check(source, "快了 {glue:text}`speedup:.1f` 倍，参见{doc}`其他 <pitfalls>`。") == []
    assert check("{glue:md}`verdict`", "结论：{glue:md}`verdict`")  # cannot work, says why


def test_translated_glue_points_at_its_own_page(catalogues):
    glue_here = catalogues.glue_here
    text = "快了 {glue:text}`speedup:.1f` 倍，{glue}`x` 和 {glue:any}`other.md::y`，{glue:text}`n`"
    assert glue_here(text, "book/static_vs_dynamic") == (
        "快了 {glue:text}`static_vs_dynamic.md::speedup:.1f` 倍，"
        "{glue}`static_vs_dynamic.md::x` 和 {glue:any}`other.md::y`，"
        "{glue:text}`static_vs_dynamic.md::n:s`"
    )


def test_status_sees_fuzzy_untranslated_and_missing(catalogues, tmp_path):
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    template = Catalog()
    for message in ("one", "two", "three"):
        template.add(message)
    translated = Catalog(locale="zh_CN")
    translated.add("one", "一")
    translated.add("two", "二", flags=["fuzzy"])
    po = tmp_path / "page.po"
    with po.open("wb") as f:
        write_po(f, translated)
    status = catalogues.catalogue_status(template, po, "page")
    assert (status.untranslated, status.fuzzy, status.translated) == (["three"], ["two"], 1)
    assert not status.done and "fuzzy: 'two'" in status.problems()
    missing = catalogues.catalogue_status(template, tmp_path / "none.po", "page")
    assert missing.missing and not missing.done


def test_update_marks_a_changed_english_paragraph_fuzzy_and_keeps_the_old_english(
    catalogues, tmp_path
):
    """What a translator sees after `make translations` when an English paragraph changed."""
    from babel.messages.catalog import Catalog

    old = Catalog()
    old.add("The cat sat on the mat.")
    po = tmp_path / "page.po"
    catalog = catalogues.updated(old, po, "zh_CN")
    catalog["The cat sat on the mat."].string = "猫坐在垫子上。"
    catalogues.save_po(catalog, po)
    new = Catalog()
    new.add("The cat sat on the red mat.")
    catalogues.save_po(catalogues.updated(new, po, "zh_CN"), po)
    text = po.read_text(encoding="utf-8")
    assert "#, fuzzy" in text and '#| msgid "The cat sat on the mat."' in text
    assert 'msgstr "猫坐在垫子上。"' in text  # the old translation, to be corrected
    assert catalogues.save_po(catalogues.updated(new, po, "zh_CN"), po) is False  # idempotent


def test_english_changed_twice_still_shows_the_english_that_was_translated(catalogues, tmp_path):
    from babel.messages.catalog import Catalog

    po = tmp_path / "page.po"
    versions = [
        "Fusion saves DRAM traffic.",
        "Fusion saves DRAM round trips.",
        "Fusion saves round trips.",
    ]
    first = Catalog()
    first.add(versions[0])
    catalog = catalogues.updated(first, po, "zh_CN")
    catalog[versions[0]].string = "融合节省了显存访问。"
    catalogues.save_po(catalog, po)
    for english in versions[1:]:
        template = Catalog()
        template.add(english)
        catalogues.save_po(catalogues.updated(template, po, "zh_CN"), po)
    text = po.read_text(encoding="utf-8")
    assert f'#| msgid "{versions[0]}"' in text and versions[1] not in text
    # once the translator fixes it and drops the fuzzy flag, the old English goes away
    catalog = catalogues.load_po(po)
    catalog[versions[2]].flags.discard("fuzzy")
    catalogues.save_po(catalog, po)
    catalogues.save_po(catalogues.updated(template, po, "zh_CN"), po)
    assert "#|" not in po.read_text(encoding="utf-8")
