"""Conversation goals sampled from a built domain, and real goals checked against it.

``record`` (the ``Goal`` dataclass, the one reader and writer of goal files) ← ``graph`` (GoalGraph,
EntityIndex, GoalOptions, the STYLES registry) ← ``styles`` (DuConv one-/two-step, KdConv hops, DuRecDial
sequences, each registered by name) ← ``generate`` (sample and write goals);
``check`` validates real sessions' goals against the graph. DuRecDial sequences: ``durecdial`` (goal types
and the transition counts of real sessions) ← ``sequences`` (walks over them, topics, profiles, situations).
"""
