"""The datasets kgforge knows, each a room of its own: the one place to ask how dataset X is read, written,
grounded, evaluated, described and sampled.

A dataset is a package (a *room*): ``kgforge/datasets/<name>/`` for the built-in ones, or a user's own package
named by an entry point of the group ``kgforge.datasets`` (``[project.entry-points."kgforge.datasets"] mine =
"mypkg.mine"``). Its ``__init__`` holds a :class:`Dataset` record named ``DATASET`` and imports nothing heavy.
What the dataset *does* lives in the room's part modules, one per component kind (:data:`PARTS`): ``source``
registers its importers, ``export`` its export format, ``grounding`` its grounder, ``evaluation`` its evaluation
layout, ``statistics`` its corpus statistics, ``goals`` its goal styles, ``synth`` and ``collect`` its styles,
``release`` its release layouts, a ``rubrics/`` folder its rating rubrics and a ``prompts/`` folder its prompts. Each component kind's registry imports the matching part of every
room the first time it is read (:func:`room_parts`), so a lower layer finds a dataset's component by name
without importing the room, and a dataset is added without a list anywhere to update (docs/extending.md).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from kgforge.core.errors import KgforgeError
from kgforge.core.registry import Entry, Registry

BUILTIN_ROOMS = "kgforge.datasets"
# the part modules a room may have, one per component kind (a missing one: the dataset has no such component)
PARTS = ("source", "export", "grounding", "evaluation", "statistics", "goals", "synth", "collect", "release")


@dataclass(frozen=True)
class Dataset:
    """What a dataset is: its name (the one its components are registered under), a title and a line
    describing it, its languages, where it is published, and the package of its room (set when registered)."""

    name: str
    title: str
    description: str
    languages: tuple[str, ...] = ()
    homepage: str = ""
    package: str = ""

    def part(self, kind: str) -> str | None:
        """The module of the room's ``kind`` part (one of :data:`PARTS`), None when the room has none."""
        if kind not in PARTS:
            raise KgforgeError(f"unknown dataset part {kind!r}; known parts: {', '.join(PARTS)}")
        module = f"{self.package}.{kind}"
        return module if importlib.util.find_spec(module) is not None else None

    def parts(self) -> tuple[str, ...]:
        """The component kinds this room provides, in :data:`PARTS`' order."""
        return tuple(kind for kind in PARTS if self.part(kind) is not None)

    def folder(self, name: str) -> Path | None:
        """A data folder of the room (``rubrics``, ``prompts``): None when it has none."""
        spec = importlib.util.find_spec(self.package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            if (Path(location) / name).is_dir():
                return Path(location) / name
        return None


def _room(module: ModuleType) -> Dataset:
    dataset = getattr(module, "DATASET", None)
    if not isinstance(dataset, Dataset):
        raise KgforgeError(f"{module.__name__} holds no DATASET = kgforge.core.datasets.Dataset(...)")
    return replace(dataset, package=module.__name__)


def _builtin_rooms() -> list[tuple[str, Dataset]]:
    package = importlib.import_module(BUILTIN_ROOMS)
    rooms = [
        importlib.import_module(found.name) for found in pkgutil.iter_modules(package.__path__, BUILTIN_ROOMS + ".")
    ]
    return [(dataset.name, dataset) for dataset in map(_room, rooms)]


def _plugin_room(name: str, obj: Any) -> Entry[Dataset]:
    """A room of the entry-point group ``kgforge.datasets``: its package (a module holding ``DATASET``)."""
    if not isinstance(obj, ModuleType):
        raise KgforgeError(f"it is a {type(obj).__name__}, not the package of a dataset room")
    dataset = _room(obj)
    if dataset.name.lower() != name.lower():
        raise KgforgeError(f"its DATASET is named {dataset.name!r}, not {name!r} as its entry point")
    return Entry(dataset.name, dataset, dataset.description)


DATASETS: Registry[Dataset] = Registry(
    "dataset", discover=_builtin_rooms, entry_point_group="kgforge.datasets", plugin=_plugin_room
)


def room_parts(kind: str) -> list[str]:
    """The ``kind`` part module of every registered dataset that has one: what a component kind's registry
    imports (its ``modules``) to find the datasets' components."""
    return [module for entry in DATASETS if (module := entry.obj.part(kind)) is not None]


def room_folders(name: str) -> list[tuple[Dataset, Path]]:
    """Every dataset's data folder called ``name`` (``rubrics``), with the dataset it belongs to."""
    return [(entry.obj, folder) for entry in DATASETS if (folder := entry.obj.folder(name)) is not None]
