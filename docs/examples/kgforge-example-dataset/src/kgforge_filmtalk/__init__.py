"""FilmTalk: a dataset room outside kgforge. JSON lines, one dialogue a line::

    {"id": "ft-1", "topic": "Inception", "turns": [{"speaker": "user", "text": "...", "facts": [[h, r, t], ...]}]}

``facts`` is the turn's gold knowledge (absent or ``[]`` where it uses none). The room's parts register the
dataset's export format (``export``), grounder (``grounding``), evaluation layout (``evaluation``) and a corpus
statistic (``statistics``); ``rubrics/`` holds its rating rubric. This module imports nothing heavy."""

from kgforge.core.datasets import Dataset

DATASET = Dataset(
    name="filmtalk",
    title="FilmTalk (example)",
    description="English film chats, each turn's facts as [head, relation, tail] lists",
    languages=("en",),
)
