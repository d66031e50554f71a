"""``croissant.json``: Croissant 1.1 JSON-LD of a release (mlcommons.org/croissant/1.1, its Responsible-AI
vocabulary mlcommons.org/croissant/RAI/1.0).

Every file is a ``cr:FileObject`` with its sha256; each config's split files are one ``cr:FileSet`` (a glob
inside the release) that its record set reads: ``turns`` from the turn table's Parquet files, the layout's
record set from its own files, the split of each record from its file's name. The RAI fields kgforge knows
are filled (collection, raw sources, annotation, languages, known limitations); the others hold a
``TODO (author)`` line for the author to replace.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kgforge.core.jsonio import JsonObject
from kgforge.release.turns import COLUMN_DOCS

CONFORMS_TO = "http://mlcommons.org/croissant/1.1"
TODO = "TODO (author): "
# the JSON-LD context of the Croissant 1.1 specification (its Appendix 1), with the RAI prefix
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "annotation": "cr:annotation",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "excludes": "cr:excludes",
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "readLines": "cr:readLines",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sdVersion": "cr:sdVersion",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
    "unArchive": "cr:unArchive",
    "value": "cr:value",
}
MEDIA = {".parquet": "application/x-parquet", ".jsonl": "application/jsonlines", ".json": "application/json",
         ".nt": "application/n-triples", ".nq": "application/n-quads", ".md": "text/markdown"}  # fmt: skip
# The turn table's columns: Croissant data type, and the sub-fields of a column of records
TURN_TYPES: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "dialogue_id": ("sc:Text", False, ()),
    "turn": ("sc:Integer", False, ()),
    "speaker": ("sc:Text", False, ()),
    "text": ("sc:Text", False, ()),
    "language": ("sc:Text", False, ()),
    "topics": ("sc:Text", True, ()),
    "goal": ("sc:Text", False, ()),
    "facts": ("sc:Text", True, ("fact_id", "head", "relation", "tail")),
    "facts_from": ("sc:Text", False, ()),
    "verdict": ("sc:Text", False, ()),
    "claims": ("sc:Text", True, ("head", "relation", "said", "status")),
}


@dataclass(frozen=True)
class LayoutColumn:
    """A top-level key of the layout's records, as its record set reads it."""

    name: str
    array: bool  # a list (of text, or of lists)
    description: str


@dataclass(frozen=True)
class CroissantInput:
    name: str
    description: str
    licence: str  # a URL, or the licence's words
    version: str
    date: str
    languages: tuple[str, ...]
    keywords: tuple[str, ...]
    files: dict[str, str]  # path inside the release -> sha256
    turns_glob: str
    layout_config: str
    layout_glob: str
    layout_media: str
    layout_columns: tuple[LayoutColumn, ...]
    rai: dict[str, Any]  # rai:… property -> text or list of texts


def croissant(made: CroissantInput) -> JsonObject:
    """The JSON-LD document of the release described by ``made``."""
    distribution: list[dict[str, Any]] = [
        {
            "@type": "cr:FileObject",
            "@id": path,
            "name": path,
            "contentUrl": path,
            "encodingFormat": MEDIA.get(path[path.rfind(".") :], "application/octet-stream"),
            "sha256": digest,
        }
        for path, digest in sorted(made.files.items())
    ]
    distribution += [
        _file_set("turns-files", made.turns_glob, MEDIA[".parquet"]),
        _file_set(f"{made.layout_config}-files", made.layout_glob, made.layout_media),
    ]
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": made.name,
        "description": made.description,
        "conformsTo": CONFORMS_TO,
        "license": made.licence,
        "version": made.version,
        "datePublished": made.date,
        "citeAs": TODO + "the BibTeX entry of the paper that describes this release",
        "inLanguage": list(made.languages),
        "keywords": list(made.keywords),
        "isLiveDataset": False,
        "distribution": distribution,
        "recordSet": [_turns_record_set(made.turns_glob), _layout_record_set(made)],
        **made.rai,
    }


def _file_set(name: str, glob: str, media: str) -> dict[str, Any]:
    return {"@type": "cr:FileSet", "@id": name, "name": name, "encodingFormat": media, "includes": glob}


def _split_field(record_set: str, file_set: str, glob: str) -> dict[str, Any]:
    folder, _, pattern = glob.rpartition("/")
    suffix = pattern.replace("*", "")
    return {
        "@type": "cr:Field",
        "@id": f"{record_set}/split",
        "name": "split",
        "description": "the split the record belongs to (its file's name)",
        "dataType": "sc:Text",
        "source": {
            "fileSet": {"@id": file_set},
            "extract": {"fileProperty": "fullpath"},
            "transform": {"regex": rf"^(?:.*/)?{folder}/(\w+){suffix.replace('.', '[.]')}$"},
        },
    }


def _column(record_set: str, file_set: str, name: str, data_type: str, description: str) -> dict[str, Any]:
    return {
        "@type": "cr:Field",
        "@id": f"{record_set}/{name}",
        "name": name,
        "description": description,
        "dataType": data_type,
        "source": {"fileSet": {"@id": file_set}, "extract": {"column": name}},
    }


def _turns_record_set(glob: str) -> dict[str, Any]:
    fields = [_split_field("turns", "turns-files", glob)]
    for name, (data_type, array, subfields) in TURN_TYPES.items():
        field = _column("turns", "turns-files", name, data_type, COLUMN_DOCS[name])
        if array:
            field.update(isArray=True, arrayShape="-1")
        if subfields:
            del field["dataType"]
            field["subField"] = [
                {
                    "@type": "cr:Field",
                    "@id": f"turns/{name}/{sub}",
                    "name": sub,
                    "dataType": "sc:Text",
                    "source": {
                        "fileSet": {"@id": "turns-files"},
                        "extract": {"column": name},
                        "transform": {"jsonPath": sub},
                    },
                }
                for sub in subfields
            ]
        fields.append(field)
    return {
        "@type": "cr:RecordSet",
        "@id": "turns",
        "name": "turns",
        "description": "one row per utterance, the same columns for every dataset (kgforge docs/release.md)",
        "field": fields,
    }


def _layout_record_set(made: CroissantInput) -> dict[str, Any]:
    config, file_set = made.layout_config, f"{made.layout_config}-files"
    fields = [_split_field(config, file_set, made.layout_glob)]
    for column in made.layout_columns:
        field = _column(config, file_set, column.name, "sc:Text", column.description)
        if made.layout_media == MEDIA[".json"]:  # one JSON array a file: each record's key by its JSON path
            field["source"]["extract"] = {"jsonPath": f"$[*].{column.name}"}
        if column.array:
            field.update(isArray=True, arrayShape="-1")
        fields.append(field)
    return {
        "@type": "cr:RecordSet",
        "@id": config,
        "name": config,
        "description": f"the dialogues in {config}'s own layout, as its baselines read them",
        "field": fields,
    }


def rai_todo(fields: Iterable[str]) -> dict[str, str]:
    """The RAI fields kgforge cannot know, each marked for the author."""
    return {field: TODO + what for field, what in _TODO.items() if field in set(fields)}


_TODO = {
    "rai:dataBiases": "biases of the dialogues and the graph (topics, speakers, regions) you know of",
    "rai:personalSensitiveInformation": "personal or sensitive information the dialogues hold, and how it was removed",
    "rai:dataSocialImpact": "the release's possible social impact",
    "rai:dataUseCases": "intended uses (training, evaluation) and uses that are not recommended",
    "rai:dataReleaseMaintenancePlan": "who maintains the release, how it is versioned and when it is updated",
    "rai:dataCollectionTimeframe": "when the dialogues were collected (start and end dates)",
    "rai:annotatorDemographics": "who the annotators were (crowd or experts, languages, recruitment)",
}
AUTHOR_FIELDS = tuple(_TODO)
