"""PNG figures for people who would rather look than read tables: the relation and degree histograms of
`kgforge stats --plot`, the loss and validation curves `kgforge embed` writes beside its bundle.

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


def _save(figure: Any, path: Path | OutputFile) -> Path:
    """Draw ``figure`` into ``path``: a user's file (an :class:`OutputFile`, checked) or one of kgforge's own
    layout (an embedding bundle's curve, a plain path)."""
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
