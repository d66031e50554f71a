"""Contract cases per component kind (PyKEEN's idea): every registered dataset, grounder, evaluation layout and
export format is checked by the same cases, parametrised from its registry, so an entry added by a room or a
plug-in is tested without a line here; the meta case fails when a registry holds an entry no case reached."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from kgforge.collect.styles import STYLES as COLLECTION_STYLES
from kgforge.core.datasets import DATASETS, PARTS, Dataset
from kgforge.core.errors import InputError
from kgforge.corpus.reading import CORPUS_LAYOUTS
from kgforge.corpus.stats import STATISTICS
from kgforge.evaluation.inputs import EVAL_LAYOUTS, read_slots
from kgforge.exports.registry import FORMATS, Format
from kgforge.goals.graph import STYLES as GOAL_STYLES
from kgforge.grounding.registry import GROUNDERS
from kgforge.release.layouts import LAYOUTS as RELEASE_LAYOUTS
from kgforge.sources.importer import IMPORTERS
from kgforge.synth.prompts import load_prompts
from kgforge.synth.styles import STYLES as SYNTH_STYLES

# the registry each part of a room fills (rubrics are a folder, read by kgforge.evaluation.rating)
PART_REGISTRIES = {
    "source": IMPORTERS,
    "export": FORMATS,
    "grounding": GROUNDERS,
    "evaluation": EVAL_LAYOUTS,
    "statistics": STATISTICS,
    "synth": SYNTH_STYLES,
    "collect": COLLECTION_STYLES,
    "goals": GOAL_STYLES,
    "release": RELEASE_LAYOUTS,
}
# the cases, as collected (each worker of pytest-xdist collects the same)
CASES = {
    "dataset": (DATASETS, DATASETS.names()),
    "grounder": (GROUNDERS, GROUNDERS.names()),
    "eval layout": (EVAL_LAYOUTS, EVAL_LAYOUTS.names()),
    "export format": (FORMATS, FORMATS.names()),
    "synth style": (SYNTH_STYLES, SYNTH_STYLES.names()),
}


def _named_for(dataset: Dataset, names: list[str]) -> list[str]:
    return [n for n in names if n == dataset.name or n.startswith(dataset.name + "-")]


@pytest.mark.parametrize("name", CASES["dataset"][1])
def test_a_dataset_room_names_itself_and_registers_each_part_under_its_name(name: str) -> None:
    dataset = DATASETS.get(name)
    assert dataset.package and importlib.import_module(dataset.package).DATASET.name == name
    assert dataset.title and dataset.description and dataset.parts(), "a room with no part does nothing"
    for part in dataset.parts():
        assert part in PARTS
        importlib.import_module(f"{dataset.package}.{part}")  # imports cleanly, alone
        registry = PART_REGISTRIES.get(part)
        if registry is not None:  # its entries carry the dataset's name, so a user finds them by it
            names = registry.names() + (CORPUS_LAYOUTS.names() if part == "statistics" else [])
            assert _named_for(dataset, names), f"{name}'s {part} part registers nothing named {name}"
    rubrics = dataset.folder("rubrics")
    assert rubrics is None or any(rubrics.glob("*.toml"))


@pytest.mark.parametrize("name", CASES["grounder"][1])
def test_a_grounder_refuses_a_file_of_other_records_naming_its_line(name: str, tmp_path: Path) -> None:
    grounder = GROUNDERS.get(name)
    bad = tmp_path / ("bad.json" if grounder.array else "bad.jsonl")
    bad.write_text('[{"neither": 1}]\n' if grounder.array else '{"neither": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match=rf"{bad}:1"):
        grounder.read(bad, False)
    kept = grounder.read(bad, True)  # --skip-invalid: set aside with its line and reason, nothing kept
    assert not kept.values and kept.rejected[0]["line"] == 1 and kept.rejected[0]["reason"]


@pytest.mark.parametrize("name", CASES["eval layout"][1])
def test_an_eval_layout_refuses_an_empty_file_by_name(name: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match=str(empty)):
        read_slots(empty, name)


@pytest.mark.parametrize("name", CASES["export format"][1])
def test_an_export_format_declares_distinct_layouts_and_reads_what_it_says(name: str) -> None:
    fmt = FORMATS.get(name)
    assert fmt.layouts and fmt.description
    names = [layout.name for layout in fmt.layouts]
    assert len(set(names)) == len(names) and all(fmt.layout(n).name == n for n in names)
    if fmt.reads_dialogues:  # it knows its own records, and no other value
        assert type(fmt).source_dialogue is not Format.source_dialogue
        assert fmt.detect(["not", "a", "record"]) is None


@pytest.mark.parametrize("name", CASES["synth style"][1])
def test_a_synth_style_drafts_into_a_registered_format_from_prompts_in_both_languages(name: str) -> None:
    style = SYNTH_STYLES.get(name)
    assert style.layouts and style.default_layout in style.layouts and style.export_format in FORMATS
    for language in ("zh", "en"):
        prompts = load_prompts(style.prompts, language)
        assert prompts.language == language and all(prompts.templates.values())


@pytest.mark.parametrize("kind", CASES)
def test_every_registered_entry_has_contract_cases(kind: str) -> None:
    """The cases were made from the registry once it had loaded every room and plug-in: an entry registered
    later, where no case reaches it (a lazily imported module registering by side effect), fails here."""
    registry, cased = CASES[kind]
    assert cased and set(registry.names()) == set(cased)
