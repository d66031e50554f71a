"""The datasets kgforge reads, writes, grounds, evaluates and makes: one room (a subpackage) per dataset.

A room's ``__init__`` holds its :class:`kgforge.core.datasets.Dataset` record; its part modules (``source``,
``export``, ``grounding``, ``evaluation``, ``statistics``, ``goals``, ``synth``, ``collect``) and its
``rubrics/`` folder register the dataset's components on their kinds' registries, which import them by name the
first time they are read (:func:`kgforge.core.datasets.room_parts`). Nothing imports a room directly: a new
dataset is one folder here, or one package of a user's own with an entry point in ``kgforge.datasets``
(docs/extending.md).
"""
