"""Conversation goals sampled from a built domain, and real goals checked against it.

``graph`` (GoalGraph, EntityIndex, GoalOptions, the STYLES registry) ← ``styles`` (DuConv one-/two-step,
KdConv hops, DuRecDial sequences, each registered by name) ← ``generate`` (sample, write, read goals);
``check`` validates real sessions' goals against the graph.
"""
