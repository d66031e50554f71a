"""Site specs: which pages a crawl visits and what it reads from them, declared, not coded.

A :class:`SiteSpec` names its start pages and its page rules. A :class:`PageRule` matches URLs
(a regex on the path and query), says which links to follow (CSS selector → page kind), and, for
detail pages, which entity the page describes and which fields map onto the domain schema's
relations: single :class:`Field` selectors and :class:`Infobox` blocks of ``label: value`` rows.
What selectors cannot express goes into a small ``hook(page, record)``.

Specs live in the top-level ``crawlers/`` package, one module per site exposing ``SPEC``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

from kgforge.core.errors import KgforgeError
from kgforge.core.registry import Registry

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, PageElement, Tag

HTML_PARSER = "html.parser"  # pinned: the tree of broken HTML depends on the parser
_SPACES = re.compile(r"\s+")
_CJK = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"
_CJK_GAP = re.compile(f"(?<=[{_CJK}]) +(?=[{_CJK}])")  # a space only markup put there (<span>北</span>洋)
_LABEL_TRIM = " \t\r\n:：\u00a0"


@dataclass(frozen=True)
class Field:
    """One value (or several) read with a CSS selector.

    ``relation`` is a schema relation id or label, or ``name`` / ``name_en`` for the entity's
    names. ``attr`` reads an attribute instead of the text; ``pattern`` keeps its first group;
    ``split`` cuts one text into several values; ``link`` makes each value an entity reference
    to the linked page (its href) of that page kind; ``lang`` tags texts.
    """

    relation: str
    selector: str
    attr: str | None = None
    many: bool = False
    pattern: str | None = None
    split: str | None = None
    link: bool = False
    lang: str | None = None
    optional: bool = False  # absent on many real pages: no warning when missing


@dataclass(frozen=True)
class Infobox:
    """Rows of ``label: value`` pairs, as in Douban's ``#info``, Baike's ``dl`` or a MediaWiki table.

    ``rows`` selects one element per row (``label``/``value`` select inside it); with
    ``lines=True`` one container whose ``<br>``-separated lines are rows; with
    ``next_sibling=True`` the label elements, each followed by its value (``dt``/``dd``). ``labels``
    maps a site's labels onto schema relations (None ignores a label); other labels are looked
    up in the schema by name.
    """

    rows: str
    label: str | None = None
    value: str | None = None
    lines: bool = False
    next_sibling: bool = False  # rows select labels (``dt``); the value is the next element (``dd``)
    labels: dict[str, str | None] = field(default_factory=dict)
    split: str = r"\s+/\s+|、"


@dataclass(frozen=True)
class Follow:
    selector: str  # elements with href (or containing one)
    kind: str  # page kind of the target


@dataclass(frozen=True)
class PageRule:
    kind: str
    match: str  # regex searched in the URL's path?query; group 1 (if any) is the site's id
    entity_type: str | None = None  # schema type id; None for list pages (no record)
    fields: tuple[Field, ...] = ()
    infoboxes: tuple[Infobox, ...] = ()
    follow: tuple[Follow, ...] = ()
    hook: Callable[[Page, Record], None] | None = None

    def site_id(self, url: str) -> str:
        match = re.search(self.match, _path_query(url))
        return match.group(1) if match and match.groups() else _path_query(url)


@dataclass(frozen=True)
class SiteSpec:
    name: str
    domain: str  # default domain schema
    base_url: str
    start: tuple[tuple[str, str], ...]  # (path, page kind)
    rules: tuple[PageRule, ...]
    description: str = ""
    language: str = "zh"
    # Other hosts of the real site → the path prefix their pages take under a --base-url mirror.
    hosts: dict[str, str] = field(default_factory=dict)
    origin: str | None = None  # the real base URL, once pointed at a mirror

    def with_base_url(self, base_url: str | None) -> SiteSpec:
        if not base_url or base_url.rstrip("/") == self.base_url:
            return self
        return replace(self, base_url=base_url.rstrip("/"), origin=self.origin or self.base_url)

    def _real_hosts(self) -> dict[str, str]:
        home = urlsplit(self.origin or self.base_url).netloc.lower()
        return {home: "", **{h.lower(): p for h, p in self.hosts.items()}}

    def localise(self, url: str) -> str:
        """A link to the real site, rewritten onto the mirror when the spec points at one."""
        if self.origin is None:
            return url
        parts = urlsplit(url)
        prefix = self._real_hosts().get(parts.netloc.lower())
        if prefix is None:
            return url
        base = urlsplit(self.base_url)
        return urlunsplit((base.scheme, base.netloc, base.path.rstrip("/") + prefix + parts.path, parts.query, ""))

    def start_urls(self) -> list[tuple[str, str]]:
        """Start pages: paths under the base URL, or full URLs of the real site (localised)."""
        return [
            (self.localise(path) if "://" in path else urljoin(self.base_url + "/", path.lstrip("/")), kind)
            for path, kind in self.start
        ]

    def rule(self, kind: str) -> PageRule:
        for rule in self.rules:
            if rule.kind == kind:
                return rule
        raise KgforgeError(f"site spec {self.name!r} has no page kind {kind!r}")

    def start_kinds(self) -> set[str]:
        """Page kinds the list pages lead to: their entities are the crawl's start entities."""
        return {
            f.kind
            for r in self.rules
            if r.entity_type is None
            for f in r.follow
            if self.rule(f.kind).entity_type is not None
        }

    def rule_for_url(self, url: str) -> PageRule | None:
        target = _path_query(url)
        return next((r for r in self.rules if re.search(r.match, target)), None)

    def scope_hosts(self) -> frozenset[str]:
        """The hosts (netlocs) a crawl of this spec visits: the base URL's, plus the real site's other
        hosts unless the spec points at a mirror (whose pages take their links under its own host)."""
        base = urlsplit(self.base_url).netloc.lower()
        return frozenset({base, *self._real_hosts()}) if self.origin is None else frozenset({base})

    def in_scope(self, url: str) -> bool:
        return urlsplit(url).netloc.lower() in self.scope_hosts()


@dataclass
class Fact:
    relation: str  # schema relation id or a site label
    value: str
    target_url: str | None = None  # the linked page, for entity values
    lang: str | None = None


@dataclass
class Record:
    """What one detail page says about one entity."""

    site: str
    url: str
    kind: str
    entity_type: str
    site_id: str
    name: str | None = None
    name_en: str | None = None
    facts: list[Fact] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add(self, relation: str, value: str | None, target_url: str | None = None, lang: str | None = None) -> None:
        value = clean_text(value or "")
        if not value:
            return
        if relation == "name":
            self.name = self.name or value
        elif relation == "name_en":
            self.name_en = self.name_en or value
        else:
            self.facts.append(Fact(relation, value, target_url, lang))

    def warn(self, field_name: str, problem: str) -> None:
        self.warnings.append(f"{self.url}: field {field_name!r}: {problem}")


@dataclass
class Page:
    url: str
    soup: BeautifulSoup
    spec: SiteSpec

    def absolute(self, href: str) -> str:
        return self.spec.localise(canonical_url(urljoin(self.url, href)))

    def target(self, anchor: Tag | None) -> str | None:
        """The page an anchor links to; None for ``#`` and other links back to this page."""
        if anchor is None:
            return None
        url = self.absolute(str(anchor["href"]))
        return None if url == canonical_url(self.url) else url


def canonical_url(url: str) -> str:
    """Fragment dropped, scheme and host lower-cased; path and query kept as they are."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def clean_text(text: str) -> str:
    return _CJK_GAP.sub("", _SPACES.sub(" ", text.replace("\u00a0", " ")).strip())


def _soup() -> ModuleType:
    """bs4, imported on first use: it (and soupsieve) cost every kgforge command 70 ms at start-up."""
    import bs4

    return bs4


def parse_html(text: str) -> BeautifulSoup:
    return _soup().BeautifulSoup(text, HTML_PARSER)


def _path_query(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def links(spec: SiteSpec, rule: PageRule, page: Page) -> list[tuple[str, str]]:
    """The in-scope links a page of ``rule`` leads to, as ``(url, page kind)`` in document order."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for follow in rule.follow:
        for element in page.soup.select(follow.selector):
            anchor = element if element.has_attr("href") else element.find(href=True)
            if anchor is None:
                continue
            url = page.absolute(str(anchor["href"]))
            if url not in seen and spec.in_scope(url) and url != page.url:
                seen.add(url)
                found.append((url, follow.kind))
    return found


def extract(spec: SiteSpec, rule: PageRule, page: Page) -> Record | None:
    """The record of a detail page; problems become warnings naming the URL and the field."""
    if rule.entity_type is None:
        return None
    record = Record(
        site=spec.name, url=page.url, kind=rule.kind, entity_type=rule.entity_type, site_id=rule.site_id(page.url)
    )
    for fld in rule.fields:
        _read_field(page, fld, record)
    if rule.infoboxes and not [box for box in rule.infoboxes if _read_infobox(page, box, record)]:
        record.warn("infobox", "nothing matches " + " or ".join(repr(box.rows) for box in rule.infoboxes))
    if rule.hook is not None:
        try:
            rule.hook(page, record)
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
            record.warn("hook", f"{rule.hook.__name__} failed: {exc.__class__.__name__}: {exc}")
    if not record.name:
        record.warn("name", "no entity name found; the page is skipped")
    return record


def _read_field(page: Page, fld: Field, record: Record) -> None:
    elements = page.soup.select(fld.selector)
    if not elements:
        if not fld.optional:
            record.warn(fld.relation, f"nothing matches {fld.selector!r}")
        return
    for element in elements if fld.many else elements[:1]:
        raw = element.get(fld.attr) if fld.attr else element.get_text(" ")
        if isinstance(raw, list):
            raw = " ".join(raw)
        values = [clean_text(raw or "")]
        if fld.pattern:
            match = re.search(fld.pattern, values[0])
            if not match:
                record.warn(fld.relation, f"{values[0][:60]!r} does not match {fld.pattern!r}")
                continue
            values = [match.group(1)]
        if fld.split:
            values = [v for part in values for v in re.split(fld.split, part)]
        target = None
        if fld.link:
            anchor = element if element.has_attr("href") else element.find(href=True)
            target = page.target(anchor)
        for value in values:
            record.add(fld.relation, value, target, fld.lang)


def _read_infobox(page: Page, box: Infobox, record: Record) -> bool:
    containers = page.soup.select(box.rows)
    if not containers:
        return False
    if box.lines:
        rows = _lines(containers[0])
    elif box.next_sibling:
        rows = [
            (clean_text(el.get_text(" ")), [el.find_next_sibling()] if el.find_next_sibling() else [])
            for el in containers
        ]
    else:
        rows = [_row_pair(element, box) for element in containers]
    for label, nodes in rows:
        label = label.strip(_LABEL_TRIM)
        if not label:
            continue
        relation = box.labels.get(label, label)
        if relation is None:
            continue
        for value, target in _values(page, nodes, box.split):
            record.add(relation, value, target)
    return True


def _row_pair(element: Tag, box: Infobox) -> tuple[str, list]:
    label_el = element.select_one(box.label) if box.label else None
    if label_el is None:
        return _label_line(list(element.children)) or ("", [])
    value_el = element.select_one(box.value) if box.value else None
    nodes: list[PageElement] = (
        [value_el] if value_el is not None else [n for n in element.children if n is not label_el]
    )
    return clean_text(label_el.get_text(" ")), nodes


def _lines(container: Tag) -> list[tuple[str, list]]:
    """``<br>``-separated ``label: value`` lines, each line's nodes kept (links included)."""
    lines: list[list] = [[]]
    _split_lines(container, lines)
    return [row for row in map(_label_line, lines) if row]


def _split_lines(node: Tag, lines: list[list]) -> None:
    # Broken HTML (an unclosed <span>) nests later lines inside an earlier one: descend into it.
    for child in node.children:
        if isinstance(child, _soup().Tag) and child.name == "br":
            lines.append([])
        elif isinstance(child, _soup().Tag) and child.find("br") is not None:
            _split_lines(child, lines)
        else:
            lines[-1].append(child)


def _label_line(nodes: list) -> tuple[str, list] | None:
    text = clean_text("".join(n.get_text(" ") if isinstance(n, _soup().Tag) else str(n) for n in nodes))
    match = re.match(r"([^:：]{1,20})[:：]\s*(.*)$", text)
    return (match.group(1), _after_label(nodes, match.group(1))) if match else None


def _after_label(nodes: list, label: str) -> list:
    """The nodes of a line after its label (the label's own element and the colon dropped)."""
    out, seen_label = [], False
    for node in nodes:
        text = node.get_text(" ") if isinstance(node, _soup().Tag) else str(node)
        if not seen_label:
            if label in text:
                seen_label = True
                rest = text.split(label, 1)[1].lstrip(_LABEL_TRIM)
                if isinstance(node, _soup().Tag) and node.find(href=True) is not None and rest:
                    out.append(node)
                elif rest:
                    out.append(_soup().NavigableString(rest))
            continue
        out.append(node)
    return out


def _values(page: Page, nodes: list, split: str) -> list[tuple[str, str | None]]:
    """Values of one row: each link is one (entity) value; other text is split on separators."""
    values: list[tuple[str, str | None]] = []
    for node in nodes:
        if isinstance(node, _soup().Tag):
            anchors = [node] if node.has_attr("href") else node.find_all(href=True)
            if anchors:
                values += [(clean_text(a.get_text(" ")), page.target(a)) for a in anchors]
                continue
            text = node.get_text(" ")
        else:
            text = str(node)
        values += [(part, None) for part in re.split(split, clean_text(text).strip(" /")) if part.strip(" /")]
    return [(v.strip(_LABEL_TRIM + "/"), t) for v, t in values if v.strip(_LABEL_TRIM + "/")]


def _site_folder() -> Iterator[tuple[str, SiteSpec]]:
    """The specs of the project's ``crawlers/`` folder, imported by name at run time: the engine never
    imports ``crawlers`` statically, and a checkout without the folder simply has no built-in sites."""
    try:
        folder = importlib.import_module("crawlers")
    except ModuleNotFoundError:
        return
    for module in pkgutil.iter_modules(folder.__path__):
        if not module.name.startswith("_"):
            spec = getattr(importlib.import_module(f"crawlers.{module.name}"), "SPEC", None)
            if not isinstance(spec, SiteSpec):
                raise KgforgeError(f"crawlers/{module.name}.py must define SPEC = SiteSpec(...)")
            yield module.name, spec


SITES: Registry[SiteSpec] = Registry("site spec", discover=_site_folder, entry_point_group="kgforge.sites")


def site_names() -> list[str]:
    return SITES.names()


def load_spec(name: str, base_url: str | None = None) -> SiteSpec:
    """The spec ``crawlers/<name>.py`` exposes as ``SPEC`` (or a plug-in registers under the entry-point
    group ``kgforge.sites``), pointed at ``base_url`` if given."""
    return SITES.get(name).with_base_url(base_url)
