"""The grader's feedback in the learner's language (issue 15): same points, translated words.

The kernel records the learner's language in the answer (``submit``); the grader writes the
score lines and the reasons an answer is invalid in that language, whatever its own is.
"""

from __future__ import annotations

import re
import signal

import pytest
from nbformat.v4 import new_code_cell

from chipsim import i18n
from chipsim.passes.memory import first_fit
from grader import encode, score_answer, submit
from grader.problems.parts import PARTS
from grader.scoring.answer import records_fingerprint
from grader.scoring.references import built

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english_grader(monkeypatch):
    monkeypatch.delenv("CHIPSIM_LANG", raising=False)
    i18n.set_language(None)
    yield
    i18n.set_language(None)


def first_fit_answer(language):
    """Part 3 of memory_planning answered with first fit (partial credit, a lower bound)."""
    records = built("memory_greedy", "random_40")
    offsets = dict(first_fit(list(records)).offsets)
    answers = {"random_40": {"records": records_fingerprint(records), "offsets": offsets}}
    return encode("memory_greedy", answers, language=language)


def grade(doc):
    return score_answer(PARTS["memory_greedy"], doc, points=3, required=["random_40"])


def test_submit_records_the_learners_language():
    def planner(records, alignment=64):
        return first_fit(records, alignment=alignment)

    assert submit("memory_first_fit", planner, score=False).doc["language"] == "en"
    i18n.set_language("zh_CN")
    answer = submit("memory_first_fit", planner)
    assert answer.doc["language"] == "zh_CN"
    # the provisional score in the notebook is in that language too
    assert "这是 memory_first_fit 部分（首次适配的偏移）的答案" in answer.text()
    assert "临时得分" in answer.text() and "Provisional" not in answer.text()


def test_chinese_feedback_has_the_same_points_and_numbers_in_chinese_words():
    en, zh = grade(first_fit_answer("en")), grade(first_fit_answer("zh_CN"))
    assert 0 < en.score < 3 and zh.score == en.score
    assert [s.fraction for s in zh.instances] == [s.fraction for s in en.instances]
    assert zh.instances[0].numbers == en.instances[0].numbers
    english, chinese = en.explain(), zh.explain()
    assert english.startswith(f"Part memory_greedy: {en.score:g} / 3 points")
    assert chinese.startswith(f"memory_greedy 部分：{zh.score:g} / 3 分")
    assert "下界" in chinese and "朴素基线" in chinese and "得分比例" in chinese
    # every number of the English feedback is in the Chinese one
    number = re.compile(r"\d+(?:[.,]\d+)*")
    assert number.findall(english) == number.findall(chinese)
    assert not HAN.search(english)
    assert not re.search(r"\b(points|credit|reference|naive|lower bound)\b", chinese)


def test_the_learners_language_wins_over_the_graders(monkeypatch):
    monkeypatch.setenv("CHIPSIM_LANG", "zh_CN")  # the instructor's grading machine
    assert not HAN.search(grade(first_fit_answer("en")).explain())
    assert HAN.search(grade(first_fit_answer(None)).explain())  # no choice: the grader's


@pytest.mark.parametrize("bad", ["klingon", 42, "zh" * 1000, None, ["zh_CN"]])
def test_a_bad_language_in_the_answer_is_english_and_costs_nothing(bad):
    doc = first_fit_answer(None)
    doc["language"] = bad
    score = grade(doc)
    assert score.score == grade(first_fit_answer("en")).score > 0
    assert score.language == "en" and not HAN.search(score.explain())


def test_why_an_answer_is_invalid_is_said_in_chinese():
    part = PARTS["fusion_chains"]
    graph = built("fusion_chains", "chains_a")
    wrong_graph = {"graph": "0" * 64, "groups": [[n] for n in range(len(graph.nodes))]}
    doc = encode("fusion_chains", {"chains_a": wrong_graph}, language="zh_CN")
    score = score_answer(part, doc, points=3, required=["chains_a"])
    assert score.score == 0.0 and score.instances[0].invalid
    text = score.explain()
    assert "这个答案针对的是另一张图" in text and "整个部分得 0 分" in text
    raised = encode("fusion_chains", {"chains_a": {"error": "ValueError: x"}}, language="zh")
    message = score_answer(part, raised, points=3, required=["chains_a"]).instances[0].message
    assert message == "你的函数抛出了异常 ValueError: x"
    missing = score_answer(part, encode("fusion_chains", {}, language="zh_CN"), points=3)
    assert all(s.message == "这个实例没有答案" for s in missing.instances)


def test_an_exception_in_the_learners_function_names_its_line_in_their_language():
    def broken(graph, chip):
        raise ValueError("boom")

    i18n.set_language("zh_CN")
    answer = submit("fusion_chains", broken, score=False)
    error = answer.doc["answers"]["chains_a"]["error"]
    assert error.startswith("ValueError: boom （broken 的第") and error.endswith("行）")


def test_the_graders_rewritten_cell_is_in_the_learners_language():
    from grader.course.rescore import _rewrite

    cell = new_code_cell("submit(...)")
    _rewrite(cell, grade(first_fit_answer("zh_CN")), restored=True)
    text = cell.outputs[0]["data"]["text/plain"]
    assert text.startswith("注意：你的笔记本修改或删除了这个测试单元格")
    assert "memory_greedy 部分" in text and "题目" not in text
    assert float(cell.outputs[-1]["data"]["text/plain"]) == grade(first_fit_answer("en")).score


def test_a_misspelt_chipsim_lang_never_breaks_grading(monkeypatch):
    monkeypatch.setenv("CHIPSIM_LANG", "klingon")
    score = grade(first_fit_answer(None))
    assert score.language == "en" and score.score > 0
    assert "language" not in encode("x", {}) and encode("x", {}, language="zh_CN")["language"]


def test_the_feedback_picture_is_drawn_in_the_learners_language(monkeypatch):
    from grader.feedback import render

    titles = []
    real = render.figure

    def spy(instance, theirs, reference):
        fig = real(instance, theirs, reference)
        titles.append([fig.get_suptitle(), *(ax.get_title() for ax in fig.axes)])
        return fig

    monkeypatch.setattr(render, "figure", spy)
    assert render.picture_output(grade(first_fit_answer("zh_CN")))["data"]["image/png"]
    assert render.picture_output(grade(first_fit_answer("en")))["data"]["image/png"]
    chinese, english = titles
    assert chinese[0] == "实例 random_40" and english[0] == "instance random_40"
    assert any(t.startswith("你的结果：内存池") for t in chinese)
    assert any(t.startswith("yours: arena") for t in english)


def test_the_learners_locale_chooses_the_language_without_a_call(monkeypatch):
    """A learner whose system speaks Chinese gets Chinese feedback with no set_language."""
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")

    def planner(records, alignment=64):
        raise NotImplementedError("first_fit_plan")

    assert submit("memory_first_fit", planner, score=False).doc["language"] == "zh_CN"
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")  # a language chipsim does not speak
    assert submit("memory_first_fit", planner, score=False).doc["language"] == "en"


def test_the_grader_remembers_the_language_of_the_learners_own_run():
    """nbgrader clears the outputs before grading; the language the learner's kernel wrote
    its answers in is kept first, and the grader's messages follow it."""
    import nbformat

    from grader.course.rescore import RescoreAnswers
    from grader.course.sanitize import RememberLanguage
    from grader.scoring.answer import MIME

    nb = nbformat.v4.new_notebook()
    cell = new_code_cell("submit('memory_greedy', greedy_plan, hidden=HIDDEN)")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "memory_greedy", "points": 3,
                                 "solution": False, "locked": True}  # fmt: skip
    cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: first_fit_answer("zh_CN")})]
    nb.cells.append(cell)
    nb, _ = RememberLanguage().preprocess(nb, {})
    assert nb.metadata["chipsim"]["language"] == "zh_CN"
    cell.outputs = []  # what nbgrader's ClearOutput does next; the kernel then says nothing
    nb, _ = RescoreAnswers().preprocess(nb, {"nbgrader": {"assignment": "memory_planning"}})
    text = cell.outputs[0]["data"]["text/plain"]
    assert HAN.search(text), text


def test_the_feedback_page_learns_its_language_from_the_graded_answers():
    """A new learner added set_language("zh_CN") and was graded without saving a run: the
    parts' feedback was Chinese (the grading kernel's answers), but nothing told the feedback
    page, whose own words stayed English. The grader now records the feedback's language."""
    import nbformat

    from grader.course.rescore import RescoreAnswers
    from grader.scoring.answer import MIME

    for language, expected in (("zh_CN", "zh_CN"), ("en", "en")):
        nb = nbformat.v4.new_notebook()
        cell = new_code_cell("submit('memory_greedy', greedy_plan, hidden=HIDDEN)")
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": "memory_greedy", "points": 3,
                                     "solution": False, "locked": True}  # fmt: skip
        answer = first_fit_answer(language)  # what the grading kernel's submit displayed
        cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: answer})]
        nb.cells.append(cell)
        nb, _ = RescoreAnswers().preprocess(nb, {"nbgrader": {"assignment": "memory_planning"}})
        assert nb.metadata["chipsim"]["language"] == expected
        assert bool(HAN.search(cell.outputs[0]["data"]["text/plain"])) == (expected == "zh_CN")


def test_the_feedback_picture_shows_the_counted_instance_that_lost_the_most(monkeypatch):
    from grader.feedback import render
    from grader.scoring.credit import InstanceScore
    from grader.scoring.partscore import PartScore

    drawn = []
    monkeypatch.setattr(render, "_draw", lambda instance, *pair: drawn.append(instance) or "")
    pair = (object(), object())
    scores = (
        InstanceScore("visible_a", 0.0, "", picture=pair),
        *(InstanceScore(f"h{k}", f, "", picture=pair) for k, f in ((1, 0.9), (2, 0.4), (3, 0.4))),
        InstanceScore("h4", 0.0, "", invalid=True),
    )
    render.picture_output(PartScore("memory_greedy", 3.0, scores, counted=("h1", "h2", "h3", "h4")))
    render.picture_output(PartScore("memory_greedy", 3.0, scores[:1], counted=()))
    assert drawn == [
        "h2",
        "visible_a",
    ]  # the least credit among pictured counted ones, first on a tie


def test_what_the_sandbox_writes_into_a_notebook_speaks_the_learners_language():
    """The notes the grader leaves in a graded notebook (a cut output, a stopped kernel) are
    in the language kept for the notebook; the grader's own language stays English."""
    from grader.sandbox.execute import why_it_ended
    from grader.sandbox.outputs import OutputBudget

    flood = {"output_type": "stream", "name": "stdout", "text": "x" * 500}
    cut = {"zh_CN": "[评分程序在这里截断了这个单元格的输出：超过了 100 字节。",
           "en": "[the grader cut the output of this cell here: more than 100 bytes."}  # fmt: skip
    for language, start in cut.items():
        budget = OutputBudget(cell_bytes=100, notebook_bytes=10_000, language=language)
        budget.start_cell()
        assert budget.admit(flood)["text"].startswith(start)
    spun = {"signal": int(signal.SIGXCPU), "cpu_s": 2.0, "limits": {"cpu_s": 2}}
    assert why_it_ended(spun) == "the kernel used all its CPU time (2 s) and was stopped"
    assert why_it_ended(spun, "zh_CN") == "内核用完了全部 CPU 时间（2 秒），被强制终止"
    assert i18n.current_language() == "en"  # the Chinese was the last word: nothing leaked


def test_a_timed_out_cell_is_told_to_be_faster_in_chinese_too():
    """The feedback knows a cell ran out of time by the error's name, not by its words: a
    Chinese learner's stopped cell is told to make the function faster, not to end the cell
    with submit(...)."""
    from nbformat import NotebookNode

    from grader.course.rescore import RescoreAnswers
    from grader.sandbox.outputs import TIMED_OUT, stopped_output

    note = "这个单元格运行超过了 120 秒，被中断了"
    cell = NotebookNode(cell_type="code", source="", metadata={"nbgrader": {"points": 4}},
                        outputs=[stopped_output(note, TIMED_OUT)])  # fmt: skip
    with i18n.use_language("zh_CN"):  # the language kept for the notebook, as rescore does
        score = RescoreAnswers()._score(cell, PARTS["fusion_challenge"], [])
    n = len(PARTS["fusion_challenge"].instances)
    said = {s.message for s in score.instances}
    assert said == {f"没有答案：{note}。评分时，这个单元格要在这段时间内把你的函数在本部分"
                    f"全部 {n} 个实例（可见的和隐藏的）上各运行一次：请让你的函数更快"}  # fmt: skip
    assert score.score == 0.0
    # said once, and nothing per instance: a walk's feedback repeated it for 12 hidden
    # instances and claimed 0 points on the visible ones, which its test cell had scored full
    headline, reason = score.explain().splitlines()
    assert reason.strip() == said.pop() and headline.endswith("0 / 4 分")


def test_the_feedback_templates_own_words_follow_the_learners_language():
    """A new learner's Chinese feedback page said "Test cell (Score: 2 / 2)", "fusion (Score:
    11.36 / 12)", "Student's answer", "Grade cell:" and "(Top)" around the Chinese
    explanations: nbgrader's template words. Rendered as nbgrader renders it."""
    import copy

    import nbformat
    from feedback_pages import page_of

    graded = nbformat.v4.new_notebook()
    answer = nbformat.v4.new_code_cell("def f(): ...")
    answer.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "f_code"}
    test = nbformat.v4.new_code_cell("submit('memory_greedy', f)")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "memory_greedy",
                                 "points": 3, "score": 2.5}  # fmt: skip
    graded.cells += [answer, test]

    def page(language):
        nb = copy.deepcopy(graded)
        if language:
            nb.metadata["chipsim"] = {"language": language}
        return page_of(nb, "memory_planning")

    english, chinese = page(None), page("zh_CN")
    template = r"Score|Test cell|Top\)|Student's|Grade cell|Comments:"
    assert len(re.findall(template, english)) >= 6  # what the template writes, in English
    assert not re.findall(template, chinese)
    assert "<h4>memory_planning（得分：2.5 / 3）</h4>" in chinese
    # the contents name each test cell by its part (nbgrader's words: "Test cell", for each)
    title = PARTS["memory_greedy"].title
    assert f'<a href="#memory_greedy">memory_greedy: {title}</a> (Score: 2.5 / 3)' in english
    with i18n.use_language("zh_CN"):
        assert f">memory_greedy：{i18n.tr(title)}</a>（得分：2.5 / 3）" in chinese
    assert "你的答案" in chinese
    # a full-width colon or bracket carries its own space (a walk found "测试单元格： memory…")
    assert "测试单元格：<code>memory_greedy</code>" in chinese
    assert re.search(r'得分：2\.5 / 3<a href="#top">（回到顶部）</a>', chinese)
    numbers = re.compile(r"\d+\.\d+ / \d+")
    assert numbers.findall(chinese) == numbers.findall(english)  # the scores untouched
    assert page("de") == english  # a language chipsim does not speak: as nbgrader wrote it


def test_a_figure_a_cell_drew_is_described_by_where_it_is_not_by_matplotlibs_repr():
    """A walk read the feedback page's figures as "<Figure size 1100x352 with 1 Axes>" (their
    alt text, matplotlib's plain text): they now say which cell drew them, under which
    heading, in the page's language; the grader's own pictures keep what they say."""
    from nbformat.v4 import new_markdown_cell, new_notebook, new_output

    from grader.feedback.page import _NO_ALT, with_alt_text

    drawn = new_output(
        "display_data", {"image/png": "AAAA", "text/plain": "<Figure size 1100x352 with 1 Axes>"}
    )
    ours = new_output("display_data", {"image/png": "BBBB", "text/plain": "credit per instance"})
    nb = new_notebook(cells=[new_markdown_cell("## Part 4: timeline\n\n## 第 4 部分：时间线"),
                             new_code_cell("show()", outputs=[drawn, ours])])  # fmt: skip
    page = "".join(
        f'<img src="data:image/png;base64,{b}" alt="{_NO_ALT}">' for b in ("AAAA", "BBBB")
    )
    assert 'alt="Figure drawn by cell 2 (under the heading Part 4: timeline)"' in with_alt_text(
        page, nb
    )
    nb.metadata["chipsim"] = {"language": "zh_CN"}
    described = with_alt_text(page, nb)
    assert 'alt="第 2 个单元格绘制的图（所在小节：第 4 部分：时间线）"' in described
    assert 'alt="credit per instance"' in described and "<Figure" not in described


def test_an_answer_cell_left_as_released_is_named_so_in_the_feedback():
    """A walk met a bare "Comment" in the contents before each part left blank, leading to
    nbgrader's "No response.": the entry and the comment say the cell has no answer yet, in the
    learner's language; a cell with an instructor's comment keeps the template's words."""
    from grader.feedback.page import template_in_language, with_part_names

    def cell(gid: str, comment: str) -> str:
        return (f'<a name="comment-{gid}"></a><div class="panel-footer"><div><b>Comments:</b> '
                f"<p>{comment}</p></div></div>")  # fmt: skip

    contents = "".join(f'<li><a href="#comment-{g}_code">Comment</a></li>' for g in "ab")
    page = contents + cell("a_code", "No response.") + cell("b_code", "Well done.")
    zh = template_in_language(with_part_names(page, "zh_CN"), "zh_CN")
    assert '<a href="#comment-a_code">a_code：尚未作答</a>' in zh
    assert "<p>尚未作答：这个单元格和练习笔记本发下来时一样，没有改动。</p>" in zh
    assert "No response" not in zh
    assert '<a href="#comment-b_code">评语</a>' in zh and "<p>Well done.</p>" in zh
    en = with_part_names(page, "en")
    assert '<a href="#comment-a_code">a_code: no answer yet</a>' in en
    assert '<a href="#comment-b_code">Comment</a>' in en
