"""The explorer's goal view reads its goal material once per published build, and again after a rebuild."""

from __future__ import annotations

import asyncio

from kgforge.goals.graph import GoalGraph
from kgforge.serve import ServeOptions
from kgforge.serve.domain import ServedDomain
from kgforge.serve.stages import sample_topic_goals
from kgforge.store.layout import domain_paths
from tests.serve_support import build_demo, write_kb


def test_the_goal_graph_is_kept_per_build_and_read_again_after_a_rebuild(tmp_path):
    workdir = tmp_path / "kg"
    first = build_demo(workdir)
    served = ServedDomain(domain_paths("demo", workdir), ServeOptions())

    async def goal_graph() -> tuple[str, GoalGraph]:
        version = served.current()
        return version.id, served.goal_graph(version, await served.tables(version))

    async def scenario() -> list[tuple[str, GoalGraph]]:
        seen = [await goal_graph(), await goal_graph()]
        extra = write_kb(tmp_path / "kb_extra.json", {"新片": [("主演", "巩俐"), ("导演", "张艺谋")]})
        build_demo(workdir, extra)
        seen.append(await goal_graph())
        await served.close()
        return seen

    (id1, graph1), (id2, graph2), (id3, graph3) = asyncio.run(scenario())
    assert id1 == id2 == first and graph2 is graph1  # the second request reuses the first one's material
    assert graph1.build_id == first
    assert id3 != first and graph3 is not graph1 and graph3.build_id == id3  # the new build's, read afresh
    assert "新片" in graph3.labels.values() and "新片" not in graph1.labels.values()
    topic = next(iri for iri, label in graph3.labels.items() if label == "巩俐")
    goals = sample_topic_goals(graph3, topic, 3, 0)
    assert goals and all(topic in goal.topics for goal in goals)
