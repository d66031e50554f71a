"""Conversation goals sampled from a built domain, and real goals checked against it.

``record`` (the ``Goal`` dataclass, the one reader and writer of goal files) ← ``graph`` (GoalGraph,
EntityIndex, GoalOptions, the STYLES registry) ← ``styles`` (DuConv one-/two-step, KdConv hops: the samplers
the rooms' styles are made of) ← ``generate`` (sample and write goals);
``check`` validates real sessions' goals against the graph. A dataset's own goal style lives in its room
(``kgforge/datasets/<name>/goals.py``), registered on STYLES with what it says of its goals (``summary``).
"""
