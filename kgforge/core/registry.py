"""One shape for what is chosen by name: source kinds, crawl sites, goal styles, embedding models, export
formats, RDF syntaxes (PyKEEN's class-resolver idea, written once).

A :class:`Registry` maps names to objects. Names and aliases are matched without regard to case; an
unknown name fails with the known ones and the closest ("did you mean"). Entries come from three places,
gathered the first time the registry is read: ``register`` calls in the modules ``modules`` names (a list,
or a function that lists them; imported then, so a registry never imports its entries statically), a
``discover`` function (a folder scanned at run time), and the installed distributions' entry points in
``entry_point_group`` (a user's own package adds ``[project.entry-points."kgforge.sites"] mysite =
"mypkg.site:SPEC"``). What an entry point names becomes an entry through the registry's ``plugin`` function
(its aliases, description and other attributes read from the object), so a plug-in registers exactly as a
built-in does; docs/extending.md lists every group.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar, overload

from kgforge.core import plugins
from kgforge.core.errors import KgforgeError

T = TypeVar("T")


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice most like ``name`` (a misspelling of it), None when none is close: the "did you mean"
    of every unknown name."""
    found = difflib.get_close_matches(name, list(choices), n=1)
    return found[0] if found else None


def instances_of(cls: type[T], describe: Callable[[str, T], str] | None = None) -> Callable[[str, Any], Entry[T]]:
    """The ``plugin`` function of a registry whose entry points name instances of ``cls`` (a grounder, a layout, a
    style): the object as it is, described by ``describe`` (else its own ``description``); anything else is
    refused, naming the class it should be."""

    def plugin(name: str, obj: Any) -> Entry[T]:
        if not isinstance(obj, cls):
            raise KgforgeError(f"it is a {type(obj).__name__}, not a {cls.__module__}.{cls.__qualname__}")
        return Entry(name, obj, describe(name, obj) if describe else str(getattr(obj, "description", "")))

    return plugin


class UnknownName(KgforgeError):
    """A name no entry of a registry answers to; ``choices`` are the known names."""

    def __init__(self, message: str, name: str, choices: list[str]) -> None:
        super().__init__(message)
        self.name, self.choices = name, choices


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    obj: T
    description: str = ""
    aliases: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    origin: str | None = None  # a plug-in's entry point (``module:attr, entry point group G``); None: built in


class Registry(Generic[T]):
    def __init__(
        self,
        kind: str,
        *,
        plural: str | None = None,
        modules: Iterable[str] | Callable[[], Iterable[str]] = (),
        discover: Callable[[], Iterable[tuple[str, T]]] | None = None,
        entry_point_group: str | None = None,
        plugin: Callable[[str, Any], Entry[T]] | None = None,
    ) -> None:
        self.kind = kind
        self.plugin = plugin
        self.plural = plural or kind + "s"
        self.modules = modules
        self.discover = discover
        self.entry_point_group = entry_point_group
        self._entries: dict[str, Entry[T]] = {}
        self._keys: dict[str, str] = {}  # lower-cased name or alias -> name
        self._loaded = False

    @overload
    def register(
        self,
        name: str,
        obj: None = None,
        *,
        aliases: Iterable[str] = (),
        description: str = "",
        origin: str | None = None,
        **meta: Any,
    ) -> Callable[[T], T]: ...

    @overload
    def register(
        self,
        name: str,
        obj: T,
        *,
        aliases: Iterable[str] = (),
        description: str = "",
        origin: str | None = None,
        **meta: Any,
    ) -> T: ...

    def register(
        self,
        name: str,
        obj: T | None = None,
        *,
        aliases: Iterable[str] = (),
        description: str = "",
        origin: str | None = None,
        **meta: Any,
    ) -> T | Callable[[T], T]:
        """Register ``obj`` under ``name``; without ``obj``, a decorator that registers what it decorates.
        ``origin`` names the entry point of a plug-in (its errors name it)."""
        if obj is None:

            def decorate(target: T) -> T:
                self.register(name, target, aliases=aliases, description=description, origin=origin, **meta)
                return target

            return decorate
        entry = Entry(name, obj, description, tuple(aliases), meta, origin)
        taken = [key for key in (name, *entry.aliases) if self._keys.get(key.lower(), name) != name]
        if taken:
            raise KgforgeError(f"{self.kind} name {taken[0]!r} is taken by {self._keys[taken[0].lower()]!r}")
        self._entries[name] = entry
        for key in (name, *entry.aliases):
            self._keys[key.lower()] = name
        return obj

    def unregister(self, name: str) -> None:
        """Take ``name`` (and its aliases) out: a test's or a session's own entry, added for a while."""
        entry = self.entry(name)
        del self._entries[entry.name]
        for key in (entry.name, *entry.aliases):
            self._keys.pop(key.lower(), None)

    def entry(self, name: str) -> Entry[T]:
        self._load()
        key = self._keys.get(str(name).lower())
        if key is None:
            raise self._unknown(str(name))
        return self._entries[key]

    def get(self, name: str) -> T:
        return self.entry(name).obj

    def __contains__(self, name: object) -> bool:
        self._load()
        return str(name).lower() in self._keys

    def __iter__(self) -> Iterator[Entry[T]]:
        self._load()
        return iter(sorted(self._entries.values(), key=lambda e: e.name))

    def names(self) -> list[str]:
        return [entry.name for entry in self]

    def describe(self) -> dict[str, str]:
        return {entry.name: entry.description for entry in self}

    def _unknown(self, name: str) -> UnknownName:
        known = self.names()
        close = closest(name.lower(), self._keys)
        hint = f"; did you mean {self._keys[close]!r}?" if close else ""
        return UnknownName(f"unknown {self.kind} {name!r}{hint} known {self.plural}: {', '.join(known)}", name, known)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for module in self.modules() if callable(self.modules) else self.modules:
            importlib.import_module(module)
        for name, obj in self.discover() if self.discover else ():
            if name.lower() not in self._keys:
                self.register(name, obj)
        self._load_plugins()

    def _load_plugins(self) -> None:
        """The entry points of the group, imported guarded (:mod:`kgforge.core.plugins`): one that raises or
        ends the process is a PluginError naming it, never a traceback or a silent end."""
        group = self.entry_point_group
        points = [p for p in entry_points(group=group) if p.name.lower() not in self._keys] if group else []
        stopped = plugins.probe(points)
        for point in points:
            if point.name.lower() in self._keys:
                continue
            obj = plugins.load(point, self.kind, stopped)
            try:
                entry = self.plugin(point.name, obj) if self.plugin else Entry(point.name, obj)
            except Exception as exc:  # a broken plug-in must name itself, whatever it raised
                raise plugins.PluginError(f"{plugins.describe(point, self.kind)} failed to load: {exc}") from exc
            self.register(
                entry.name,
                entry.obj,
                aliases=entry.aliases,
                description=entry.description or f"plug-in {point.value}",
                origin=f"{point.value}, entry point group {point.group}",
                **entry.meta,
            )
