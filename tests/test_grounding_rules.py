"""Rules of the KdConv grounder about how speakers cite an entity's facts, each on a hand-made case (the
measured effect of each on the shared dev sets is in docs/grounding.md). The rules alone (``model="rules"``):
the learned choice reads their verdict as one feature among others and may differ on a case."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kgforge.grounding.index import GroundingIndex, make_fact
from kgforge.grounding.matching import DialogueMatcher, MatchOptions

HAND_RULES = MatchOptions(model="rules")  # these cases are the rules' (the learned choice reads their verdicts)

LEROY_TEXT = "梅尔文·勒罗伊(1900年10月15日-1987年9月13日)，出生于三藩市，美国电影导演。执导过《出水芙蓉》、《魂断蓝桥》、《鸳梦重温》等电影。"
BRIDGE_TEXT = "《魂断蓝桥》是梅尔文·勒罗伊执导的爱情片，费雯·丽、罗伯特·泰勒主演，1940年上映。"


def stated(index: GroundingIndex, topics: list[str], messages: list[str]) -> list[set[tuple[str, str]]]:
    """(subject, relation) of the facts each message of one dialogue states."""
    matcher = DialogueMatcher(index, topics, HAND_RULES)
    return [{(index.label(s.fact.subject), s.fact.relation) for s in matcher.message(m)[0]} for m in messages]


def leroy_index(works: str = "出水芙蓉") -> GroundingIndex:
    return GroundingIndex(
        names={"p": ["梅尔文·勒罗伊"], "f": ["魂断蓝桥"]},
        facts_of={
            "p": [
                make_fact("p", "Information", LEROY_TEXT, None, True, 24),
                make_fact("p", "代表作品", works, None, False, 24),
            ],
            "f": [make_fact("f", "Information", BRIDGE_TEXT, None, True, 24)],
        },
    )


def test_a_title_from_the_focus_entitys_text_states_that_text():
    """他执导的魂断蓝桥 shares four characters with 勒罗伊's text, far below the overlap threshold, but the
    title is one the text names in 《》: the text of the person in focus is cited. Not the film's own text
    (it opens with its own title), nor a person who is not in focus, nor a title the text does not hold."""
    index = leroy_index()
    assert stated(index, ["梅尔文·勒罗伊"], ["最有名的肯定是他执导的魂断蓝桥呀。"]) == [
        {("梅尔文·勒罗伊", "Information")}
    ]
    assert stated(index, ["梅尔文·勒罗伊"], ["最有名的肯定是他执导的蓝桥魂断呀。"]) == [set()]
    assert stated(index, [], ["我更喜欢看《魂断蓝桥》。"]) == [set()]


def test_a_title_another_fact_explains_is_cited_as_that_fact():
    """A title that is a value of the subject's own (代表作品), said now or before in the dialogue, is that
    fact, not the free text that mentions it too."""
    index = leroy_index(works="《出水芙蓉》、《魂断蓝桥》")
    first, again = stated(index, ["梅尔文·勒罗伊"], ["他的代表作品有魂断蓝桥。", "还是魂断蓝桥最好看。"])
    assert first == {("梅尔文·勒罗伊", "代表作品")}
    assert ("梅尔文·勒罗伊", "Information") not in again


def actors_index() -> GroundingIndex:
    return GroundingIndex(
        names={"a": ["加里·奥德曼"], "b": ["吕克·贝松"]},
        facts_of={
            "a": [make_fact("a", "职业", "演员", None, False, 24)],
            "b": [make_fact("b", "职业", "导演、编剧、演员", None, False, 24)],
        },
        relation_words={"导演", "编剧", "职业"},
    )


def test_a_role_said_of_many_people_is_nobodys_occupation():
    """The relation whose values are the graph's own relations (导演、编剧) holds roles; a role said of a group
    (这些演员, 都是实力派演员, 演员们) is no occupation of the one in focus, said of him alone it is."""
    index = actors_index()
    assert index.role_relations == frozenset({"职业"})
    groups = ("这些演员我都很喜欢。", "他们都是实力派的演员。", "这三个演员的演技没得说。", "演员们都很出色。")
    for group in groups + ("还有哪个英国演员有才气？",):
        assert stated(index, ["加里·奥德曼"], [group]) == [set()], group
    assert stated(index, ["加里·奥德曼"], ["他是一名很优秀的演员。"]) == [{("加里·奥德曼", "职业")}]
    assert stated(index, ["加里·奥德曼"], ["这些电影都很好，他也是演员。"]) == [{("加里·奥德曼", "职业")}]


def test_a_year_of_the_focus_entitys_text_states_that_text():
    """A year only 郑钧's text gives (his first album), said in a message that shares nothing else with it: the
    text is stated; a year the text does not give is not, nor one his birth date explains (出生日期)."""
    text = "郑钧，1967年11月6日出生于陕西西安，中国摇滚乐歌手。1994年在红星生产社发行第一张专辑《赤裸裸》。"
    index = GroundingIndex(
        names={"z": ["郑钧"]},
        facts_of={
            "z": [
                make_fact("z", "Information", text, None, True, 24),
                make_fact("z", "出生日期", "1967年11月06日", None, False, 24),
            ]
        },
    )
    said = "对，我也知道这个事儿，是在{}，从那以后他便在歌唱的事业上一发不可收拾。"
    assert stated(index, ["郑钧"], [said.format("1994年")]) == [{("郑钧", "Information")}]
    assert stated(index, ["郑钧"], [said.format("1995年")]) == [set()]
    assert stated(index, ["郑钧"], ["他是1967年出生的。"]) == [{("郑钧", "出生日期")}]


def test_each_new_work_of_a_list_restates_the_list():
    """代表作品 named by a list of works is cited again when another of its works comes up (还有他的…), not when
    a work said before comes up again, nor when a work the dialogue has named comes up (now the film talked about)."""
    works = "《阿甘正传》《费城故事》《拯救大兵瑞恩》《荒岛余生》"
    index = GroundingIndex(
        names={"t": ["汤姆·汉克斯"], "w": [works], "f": ["荒岛余生"]},
        facts_of={"t": [make_fact("t", "代表作品", works, "w", False, 24)]},
    )
    said = stated(
        index,
        ["汤姆·汉克斯"],
        [
            "他的代表作有《阿甘正传》。",
            "还有他的电影《拯救大兵瑞恩》。",
            "阿甘正传我看了好多遍。",
            "他还演过荒岛余生。",
            "荒岛余生里他演得真好。",
            "阿甘正传和费城故事都不错。",
        ],
    )
    cited = {("汤姆·汉克斯", "代表作品")}
    assert said == [cited, cited, set(), cited, set(), cited]


def test_one_name_of_two_entities_is_read_as_the_one_in_focus():
    """阿凡达 names the film annotated as 阿凡达 and as 阿凡达（2009年…）; both hold the release date. The
    dialogue about the one keeps reading the name as that one, whichever it is."""
    date = "2009年12月16日"
    index = GroundingIndex(
        names={"a1": ["阿凡达"], "a2": ["阿凡达（2009年詹姆斯·卡梅隆执导科幻电影）"]},
        facts_of={iri: [make_fact(iri, "上映时间", date, None, False, 24)] for iri in ("a1", "a2")},
    )
    message = ["阿凡达是2009年12月16日上映的。"]
    assert stated(index, ["阿凡达（2009年詹姆斯·卡梅隆执导科幻电影）"], message) == [
        {("阿凡达（2009年詹姆斯·卡梅隆执导科幻电影）", "上映时间")}
    ]
    assert stated(index, ["阿凡达"], message) == [{("阿凡达", "上映时间")}]


def test_a_question_does_not_cite_the_text_it_asks_about():
    """他的第一张专辑叫什么? shares its words with the singer's text, but asks: no citation. The same words
    stated (his first album came out in 1994), or stated and then asked about, are."""
    text = "郑钧，1967年11月6日出生于陕西西安，中国摇滚乐歌手。1994年在红星生产社发行第一张专辑《赤裸裸》。"
    index = GroundingIndex(names={"z": ["郑钧"]}, facts_of={"z": [make_fact("z", "Information", text, None, True, 24)]})
    info = {("郑钧", "Information")}
    assert stated(index, ["郑钧"], ["他在红星生产社发行第一张专辑叫什么？"]) == [set()]
    assert stated(index, ["郑钧"], ["他在红星生产社发行第一张专辑。"]) == [info]
    assert stated(index, ["郑钧"], ["他在红星生产社发行第一张专辑，你知道叫什么吗？"]) == [info]
    assert stated(index, ["郑钧"], ["他在红星生产社发行第一张专辑的吧？"]) == [info]


_CHINESE = st.text(alphabet=st.sampled_from(list("他的第一张专辑发行在年歌手电影很好看")), min_size=1, max_size=12)


@given(_CHINESE, _CHINESE)
def test_questions_are_the_asking_clauses_only(statement, asked):
    """A clause ending in ？ with 吗 is a question and covers exactly itself; a statement before it is none of it;
    a message without ？ asks nothing."""
    from kgforge.grounding.matching import questions

    message = f"{statement}，{asked}吗？"
    assert questions(message) == [(len(statement) + 1, len(message))]
    assert questions(f"{statement}。") == []


def test_a_value_said_whole_beside_another_said_by_most_of_it_is_not_hidden():
    """第22届香港电影金像奖最佳电影奖、最佳男主角奖 says one award whole and the next by its own words, the common
    ones once: the second's stretch covers the first's, and both are stated (an award not said is not)."""
    awards = ["第22届香港电影金像奖最佳电影奖", "第22届香港电影金像奖最佳男主角", "第22届香港电影金像奖最佳编剧"]
    index = GroundingIndex(
        names={"w": ["无间道"]}, facts_of={"w": [make_fact("w", "主要奖项", a, None, False, 24) for a in awards]}
    )
    matcher = DialogueMatcher(index, ["无间道"], HAND_RULES)
    found, _ = matcher.message("是的，还有第22届香港电影金像奖最佳电影奖、最佳男主角奖。")
    assert sorted(s.fact.value for s in found) == sorted(awards[:2])
