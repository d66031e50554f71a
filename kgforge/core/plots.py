"""PNG figures for people who would rather look than read tables: the relation and degree histograms of
`kgforge stats --plot`, the loss and validation curves `kgforge embed` writes beside its bundle, the metric ×
human-aspect correlation heatmaps and the leaderboard with intervals of `kgforge eval --plot`.

matplotlib is imported when a figure is drawn, never at import, with the Agg backend (no display needed).
Chinese relation names need a CJK font, and a fresh machine has none: kgforge depends on ``mplfonts``, a
wheel that carries Noto Sans CJK SC, and registers that file with matplotlib itself (``addfont``: no font
cache to rebuild, nothing to install system-wide). A glyph no font has is matplotlib's own warning, on
stderr, never silenced.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.files import atomic_write
from kgforge.core.output import OutputFile

# Installed CJK families, tried when the packaged font is absent (a trimmed install).
CJK_FONTS = ("Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Zen Hei", "Microsoft YaHei", "SimHei", "PingFang SC")
PACKAGED_FONT = ("mplfonts", "fonts/NotoSansCJKsc-Regular.otf")  # (package, file inside it)


def packaged_cjk_font() -> Path | None:
    """The CJK font file the ``mplfonts`` wheel carries, found without importing the package."""
    package, name = PACKAGED_FONT
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / name).is_file():
            return Path(folder) / name
    return None


@functools.cache
def _register_fonts() -> tuple[str, ...]:
    """Add the packaged CJK font to matplotlib's font list (once per process); the families to draw with,
    a CJK one first, DejaVu Sans (matplotlib's own) for whatever it lacks."""
    from matplotlib import font_manager  # lazy: matplotlib takes a second to load

    packaged = packaged_cjk_font()
    if packaged is not None:
        font_manager.fontManager.addfont(str(packaged))
        return font_manager.FontProperties(fname=str(packaged)).get_name(), "DejaVu Sans"
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return (*(f for f in CJK_FONTS if f in installed), "DejaVu Sans")


def _pyplot() -> Any:
    import matplotlib  # lazy: matplotlib takes a second to load; only figure-drawing commands need it

    matplotlib.use("Agg")
    import matplotlib.pyplot  # lazy: as above

    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)  # "font weight normal not found, using 500"
    matplotlib.rcParams["font.sans-serif"] = list(_register_fonts())
    return matplotlib.pyplot


def cjk_font() -> str | None:
    """The CJK font Chinese labels are drawn with, or None: then they draw as boxes, and the caller says so."""
    _pyplot()
    import matplotlib  # lazy: as above

    installed = set(matplotlib.rcParams["font.sans-serif"]) & set(CJK_FONTS)
    return next((f for f in CJK_FONTS if f in installed), None)


def _save(figure: Any, path: Path | OutputFile, *, tight: bool = True) -> Path:
    """Draw ``figure`` into ``path``: a user's file (an :class:`OutputFile`, checked) or one of kgforge's own
    layout (an embedding bundle's curve, a plain path)."""
    if tight:  # a figure made with constrained_layout lays itself out
        figure.tight_layout()
    with path.open("wb") if isinstance(path, OutputFile) else atomic_write(path, "wb") as out:
        figure.savefig(out, format="png", dpi=120)
    _pyplot().close(figure)
    return path.path if isinstance(path, OutputFile) else path


def relation_histogram(
    counts: Mapping[str, int], path: Path | OutputFile, *, title: str, top: int = 30, xlabel: str = "facts"
) -> Path:
    """Horizontal bars: facts per relation, the ``top`` most frequent, largest at the top."""
    plt = _pyplot()
    shown = sorted(counts.items(), key=lambda kv: -kv[1])[:top]
    figure, axes = plt.subplots(figsize=(8, 0.6 + 0.3 * max(1, len(shown))))
    axes.barh([name for name, _ in reversed(shown)], [n for _, n in reversed(shown)])
    axes.set_xlabel(xlabel)
    axes.set_title(title + (f" (top {top} of {len(counts)})" if len(counts) > top else ""))
    return _save(figure, path)


def degree_distribution(histogram: Mapping[int, int], path: Path | OutputFile, *, title: str) -> Path:
    """Entities per degree (facts an entity takes part in), both axes logarithmic."""
    plt = _pyplot()
    degrees = sorted(d for d in histogram if d > 0)
    figure, axes = plt.subplots(figsize=(6, 4.5))
    axes.loglog(degrees, [histogram[d] for d in degrees], marker="o", linestyle="none", markersize=3)
    axes.set_xlabel("degree (facts per entity)")
    axes.set_ylabel("entities")
    axes.set_title(title)
    return _save(figure, path)


def curves(
    series: Mapping[str, Sequence[float]],
    path: Path | OutputFile,
    *,
    title: str,
    xlabel: str = "epoch",
    ylabel: str = "loss",
) -> Path:
    """One line per named series over epochs 1, 2, …; empty series are left out."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 4.5))
    for name, values in series.items():
        if values:
            axes.plot(range(1, len(values) + 1), values, label=name, marker="." if len(values) < 50 else None)
    axes.xaxis.get_major_locator().set_params(integer=True)  # whole epochs
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.legend()
    return _save(figure, path)


def figure_name(source: Path, domain: str | None = None) -> str:
    """The name a figure of ``source`` is saved under: the domain (when given), the file's folder and its stem,
    each once, so that KdConv's ``film/dev.json``, ``music/dev.json`` and ``travel/dev.json`` draw to
    ``film-dev``, ``music-dev`` and ``travel-dev`` rather than one ``dev`` over the others."""
    parts = [domain or "", Path(source).resolve().parent.name, Path(source).stem]
    return "-".join(dict.fromkeys(part for part in parts if part)) or "figure"


@dataclass(frozen=True)
class Grid:
    """One heatmap: a value (or None: left blank) and a short mark per (row, column)."""

    title: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    values: tuple[tuple[float | None, ...], ...]
    marks: tuple[tuple[str, ...], ...] = ()


def heatmaps(
    grids: Sequence[Grid], path: Path | OutputFile, *, title: str, label: str, limits: tuple[float, float]
) -> Path:
    """Heatmaps side by side on one colour scale (diverging, centred in ``limits``), each cell written with its
    value and mark; a cell without a value is left grey."""
    import numpy as np  # lazy: with matplotlib

    plt = _pyplot()
    height = max(len(grid.rows) for grid in grids)
    width = sum(max(2, len(grid.columns)) for grid in grids)
    figure, axes = plt.subplots(
        1, len(grids), figsize=(2.5 + 1.3 * width, 1.6 + 0.42 * height), squeeze=False, constrained_layout=True
    )
    image = None
    for ax, grid in zip(axes[0], grids, strict=True):
        values = np.array([[np.nan if v is None else v for v in row] for row in grid.values], dtype=float)
        cmap = plt.get_cmap("RdBu_r").with_extremes(bad="#dddddd")
        image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=limits[0], vmax=limits[1], aspect="auto")
        ax.set_xticks(range(len(grid.columns)), grid.columns, rotation=30, ha="right")
        ax.set_yticks(range(len(grid.rows)), grid.rows)
        ax.set_title(grid.title)
        for i, row in enumerate(grid.values):
            for j, value in enumerate(row):
                mark = grid.marks[i][j] if grid.marks else ""
                if value is not None:
                    ax.text(j, i, f"{value:.2f}{mark}", ha="center", va="center", fontsize=8)
    figure.colorbar(image, ax=axes[0].tolist(), label=label, shrink=0.8)
    figure.suptitle(title)
    return _save(figure, path, tight=False)


@dataclass(frozen=True)
class Interval:
    """A point with its interval (``low``/``high`` None: no interval known) under a label."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None


def interval_panels(
    panels: Mapping[str, Sequence[Interval]], path: Path | OutputFile, *, title: str, columns: int = 4
) -> Path:
    """Small multiples: one panel per figure (a metric, a human aspect), a dot per label (a system) with its
    interval as a bar; a label without a value is left out of its panel."""
    plt = _pyplot()
    rows = -(-len(panels) // columns)
    labels = max((len(points) for points in panels.values()), default=1)
    figure, axes = plt.subplots(
        rows, columns, figsize=(3.4 * columns, (0.9 + 0.28 * labels) * rows), squeeze=False, constrained_layout=True
    )
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    for ax, (name, points) in zip(axes.ravel(), panels.items(), strict=False):
        shown = [p for p in points if p.value is not None]
        for y, point in enumerate(shown):
            if point.low is not None and point.high is not None:
                ax.plot([point.low, point.high], [y, y], color="tab:blue", linewidth=2)
            ax.plot([point.value], [y], marker="o", color="black", markersize=4)
        ax.set_yticks(range(len(shown)), [p.label for p in shown])
        ax.set_ylim(-0.7, len(shown) - 0.3)
        ax.set_title(name, fontsize=9)
    figure.suptitle(title)
    return _save(figure, path, tight=False)
