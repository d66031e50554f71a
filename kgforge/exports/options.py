"""The options of ``kgforge export``, checked when made (format names through the registry)."""

from __future__ import annotations

from dataclasses import dataclass

from kgforge.core.errors import KgforgeError
from kgforge.core.schema import Schema
from kgforge.exports.registry import Format, format_named
from kgforge.exports.subgraph import SubgraphOptions

GOAL_BUDGETS = (7, 4)  # DuConv dev: ~7 facts of the first topic, ~4 of the second, besides type facts and goal path
ALL_FACTS = (1 << 20,)


@dataclass(frozen=True)
class ExportOptions:
    fmt: str
    layout: str | None = None  # None: goals → the format's goal layout; dialogues → the layout they are in
    language: str | None = None
    budget: int | None = None  # facts per topic; None: 7 and 4 for goals, the format's pool budget for dialogues
    segmented: bool = True  # word-segmented layouts (DuConv): cut strings into words as the real files are
    include_text: bool = True
    skip_invalid: bool = False
    add_related: str | None = None  # model bundle name under models/
    input_layout: str | None = None  # --dialogues: the layout kind the file is in, when not detected
    refresh_attrs: bool = False  # --dialogues: rewrite gold values the graph now states otherwise
    changed_since: str | None = None  # only the dialogues or goals whose records differ from this build's export
    allow_mixed: bool = False  # write another language's label where one is lacking (reported), not refuse

    def __post_init__(self) -> None:
        format_named(self.fmt)
        if self.budget is not None and self.budget < 0:
            raise KgforgeError(f"--budget must be 0 or more facts per topic, got {self.budget}")

    def subgraph(self, fmt: Format, schema: Schema, *, goals: bool) -> SubgraphOptions:
        """What the subgraph of each dialogue holds. New goals (``goals``) take 7 and 4 facts per topic and
        no facts pointing to a topic; real dialogues in ``fmt`` (the format they are read in) take its pool
        budgets, and the facts pointing to a topic where its dialogues name entities that are only objects.
        Each topic's type fact comes only where the format states types (DuConv's 领域) and the schema
        declares some: one inferred from untyped data gives topics no type fact to carry."""
        default = GOAL_BUDGETS if goals else fmt.pool_budgets
        budgets = (self.budget,) if self.budget is not None else default or ALL_FACTS
        return SubgraphOptions(
            budgets=budgets,
            lead=min(SubgraphOptions.lead, budgets[0]),
            include_text=self.include_text,
            type_facts=fmt.type_facts and bool(schema.types),
            incoming=not goals and fmt.finds_mentions,
        )
