"""The learned choice among the facts a message may state: a logistic regression over features of each candidate.

The matcher (:mod:`kgforge.grounding.matching`) finds candidates broadly: every fact whose value, a part of it or a
run of its text the message says, with what the hand rules would say of it (the rules' own verdict is one
feature: stacking). A candidate is kept when its probability reaches the model's threshold. There are two
stages, each with its own weights and threshold: the values (entity names, literals, their parts) and then the
free texts, whose overlap is counted with the values kept masked; a third stage scores the claims that a value
said contradicts the graph. The features describe how a value was said
(the kind of match, its length, its share of the value), about whom (named, first in focus, how far back), what
the rules refused it for, and where the message stands (a question, the dialogue's first message); none names a
relation of a domain, so that a model trained on some domains holds on another
(:mod:`kgforge.grounding.learning` trains it, :mod:`kgforge.grounding.model_file` reads and writes it).

Part of grounding's inner loop: compiled with mypyc in a regular install (``hatch_build.py``).
"""

from __future__ import annotations

from math import exp

VALUE_FEATURES = (
    "rule",  # the hand rules state it
    "rule_filters",  # it passes the rules' filters (before one stretch states one fact)
    "entity",  # an entity value, said by one of its names
    "exact",  # a literal said whole
    "part",  # a literal said by a list part or another writing (a date's year, a value without its qualifier)
    "most",  # a literal said by most of its characters
    "other_writing",  # a literal said by another writing (an affix of it, a dashed date's 年月日: facts.other_writings)
    "span_chars",  # log(1 + characters said) / 3
    "value_share",  # characters said over the value's
    "value_chars",  # log(1 + the value's characters) / 4
    "subject_named",  # the message names the subject
    "subject_first",  # the subject is named, or first in focus
    "subject_recency",  # 1 / (1 + how many entities came into focus since the subject)
    "subject_topic",  # the subject is a topic the dialogue declares
    "same_name",  # the value is named by the subject's own name (one name, two entities)
    "relation_cue",  # how much of the relation's name the message says: 0, 1 character, 2 or more (0, .5, 1)
    "relation_named",  # the message says the relation's name whole
    "restated",  # the dialogue stated this value of this relation before
    "not_a_word",  # a short value not cut as a word by jieba (演员 of 女演员)
    "said_of_many",  # a role said of a group or asked about (都是演员, 哪个演员)
    "names_relation",  # the value names a relation of the domain (导演), said where it is the relation
    "span_winner",  # it wins its stretch among the candidates the rules' filters pass
    "span_rivals",  # log(1 + other candidates at its stretch)
    "inside_longer",  # its stretch lies inside a longer candidate's
    "role_relation",  # its relation's values are roles of people (职业)
    "word_valued",  # its relation's values are words (国家, 类型)
    "digits",  # the value holds a digit
    "question",  # the message asks (a clause ending in ? with a question word)
    "answer_cue",  # the message before named the relation (2+ characters of its name): this one may answer it
    "after_question",  # the message before asked
    "message_chars",  # log(1 + the message's characters) / 5
    "candidates",  # log(1 + the message's value candidates) / 3
)

TEXT_FEATURES = (
    "rule",  # the hand rules state it
    "overlap",  # the text's characters found by overlap (log(1 + count) / 3)
    "overlap_share",  # those characters over the message's (names and values stated masked)
    "whole",  # the whole text said
    "title",  # a 《title》 of the text said
    "year",  # a year of the text said
    "long_literal",  # a long literal (an award list, opening hours), not a free-text relation's value
    "best_of_relation",  # the best overlap among the message's texts of that relation
    "subject_named",
    "subject_first",
    "subject_recency",
    "subject_topic",
    "restated",  # the dialogue cited this text before
    "asking_share",  # share of the message's characters in questions
    "question",
    "after_question",
    "message_chars",
)


CLAIM_FEATURES = (  # of a value said against the graph (a contradicted or unsupported claim)
    "amount",  # a number with a unit
    "entity",  # an entity named where the subject's values of its kind are expected
    "word",  # a word of a word-valued relation (a country, a genre)
    "numbered",  # the words of a numbered value of the graph with other numbers (第70届 of 第64届奥斯卡…奖)
    "no_holder",  # no entity in focus holds values of its kind (unsupported)
    "subject_named",  # the message names the subject it is checked against
    "subject_first",  # that subject is the first in focus
    "held_values",  # log(1 + the subject's values it is checked against) / 3
    "said_chars",  # log(1 + the characters said) / 3
    "digits",  # what is said holds a digit
    "word_frequency",  # an entity's name: log(1 + its frequency in jieba's dictionary) / 10
    "facts_stated",  # log(1 + the facts the message states) / 2
    "question",  # the message asks
    "in_relation_name",  # what is said is part of a relation's name (制片 of 制片人): the relation named, no value
    "not_a_word",  # a word jieba does not cut as a word of the message (巴西 of 巴西人): the rules leave it
)


def probability(weights: list[float], bias: float, features: list[float]) -> float:
    """The logistic of ``bias + weights · features``."""
    z = bias
    for i in range(len(weights)):
        z += weights[i] * features[i]
    if z < -30.0:
        return 0.0
    if z > 30.0:
        return 1.0
    return 1.0 / (1.0 + exp(-z))


class Stage:
    """One stage's logistic regression: its features' names (:data:`VALUE_FEATURES` or :data:`TEXT_FEATURES`),
    weights, bias and the threshold from which a candidate is kept."""

    def __init__(self, names: tuple[str, ...], weights: list[float], bias: float, threshold: float) -> None:
        self.names, self.weights, self.bias, self.threshold = names, weights, bias, threshold

    def probability(self, features: list[float]) -> float:
        return probability(self.weights, self.bias, features)


class Choice:
    """A trained choice: the values' stage, the texts' stage, and the claims' (how likely a value said against the
    graph is wrong: ``contradicted`` from its threshold on, else ``unsupported``)."""

    def __init__(self, values: Stage, texts: Stage, claims: Stage) -> None:
        self.values, self.texts, self.claims = values, texts, claims
