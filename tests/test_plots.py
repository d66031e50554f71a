"""Figures draw Chinese with a real CJK font on a fresh machine: the font kgforge depends on (the mplfonts
wheel's Noto Sans CJK SC) is registered with matplotlib by kgforge itself, every character of a Chinese
relation name has a glyph in it, and a glyph that no font has is still matplotlib's warning."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from kgforge.core import plots

RELATIONS = {"全球票房": 120, "导演": 80, "主演": 75, "上映时间": 40, "类型": 12, "rating": 3}


def _font_for(family: list[str]) -> Path:
    from matplotlib import font_manager

    return Path(font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False))


def _draw(tmp_path: Path, counts: dict[str, int]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = plots.relation_histogram(counts, tmp_path / "relations.png", title="电影 关系")
    assert out.stat().st_size > 0 and out.read_bytes()[:4] == b"\x89PNG"
    return [str(w.message) for w in caught]


def test_the_packaged_cjk_font_is_a_dependency_and_is_found():
    font = plots.packaged_cjk_font()
    assert font is not None and font.is_file() and font.suffix in (".otf", ".ttf")


def test_a_figure_with_chinese_labels_draws_with_no_missing_glyph(tmp_path):
    messages = _draw(tmp_path, RELATIONS)
    assert not [m for m in messages if "missing from" in m], messages


def test_the_font_the_figures_use_covers_every_character_drawn(tmp_path):
    from matplotlib import rcParams
    from matplotlib.ft2font import FT2Font

    _draw(tmp_path, RELATIONS)
    family = list(rcParams["font.sans-serif"])
    path = _font_for(family)
    assert path == plots.packaged_cjk_font()  # the first family is the registered one, found by name
    charmap = FT2Font(str(path)).get_charmap()
    text = "".join(RELATIONS) + "电影关系"
    assert [c for c in text if ord(c) not in charmap] == []


def test_a_glyph_no_font_has_is_still_a_warning(tmp_path):
    messages = _draw(tmp_path, {"\U000e0100\ue000": 1})  # a variation selector and a private-use character
    assert any("missing from" in m for m in messages), messages


def test_registering_the_font_needs_no_cache_rebuild(monkeypatch):
    from matplotlib import font_manager

    rebuilt = []
    monkeypatch.setattr(font_manager, "_load_fontmanager", lambda *a, **k: rebuilt.append(1))
    plots._pyplot()
    assert rebuilt == []
    assert any(Path(f.fname) == plots.packaged_cjk_font() for f in font_manager.fontManager.ttflist)


@pytest.fixture(autouse=True)
def _fresh_registration():
    if hasattr(plots, "_register_fonts"):  # each test registers the font as a fresh process would
        plots._register_fonts.cache_clear()
    yield
