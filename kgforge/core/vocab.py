"""The data model's IRIs: namespaces, opaque entity IRIs, relation IRIs and graph IRIs.

Entity IRIs are derived from a source's own identifier by hashing, so a label never appears
inside an IRI (labels live in ``rdfs:label``). The same key always gives the same IRI.
"""

from __future__ import annotations

import hashlib
import re

KG = "https://kgforge.org/"
ENTITY = KG + "entity/"
RELATION = KG + "relation/"
CLASS = KG + "class/"
GRAPH = KG + "graph/"
ONTO = KG + "ontology#"

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDF_PROPERTY = "http://www.w3.org/1999/02/22-rdf-syntax-ns#Property"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_ALT_LABEL = "http://www.w3.org/2004/02/skos/core#altLabel"
OWL = "http://www.w3.org/2002/07/owl#"
OWL_SAME_AS = OWL + "sameAs"
RDFS_SUBCLASS_OF = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
SCHEMA_DESCRIPTION = "http://schema.org/description"
GEO_WKT = "http://www.opengis.net/ont/geosparql#wktLiteral"
COMMONS_FILE = "http://commons.wikimedia.org/wiki/Special:FilePath/"
COMMONS_DATA = "http://commons.wikimedia.org/data/main/"
GENID = KG + ".well-known/genid/"
XLORE = "http://xlore.org/"
XLORE_INSTANCE = XLORE + "instance/"
PROV_SOURCE = "http://www.w3.org/ns/prov#hadPrimarySource"

KIND = ONTO + "kind"
KIND_IRIS = {
    "entity": ONTO + "EntityValued",
    "literal": ONTO + "LiteralValued",
    "text": ONTO + "TextValued",
}
SCHEMA_GRAPH = GRAPH + "schema"

_UNSAFE_IRI_CHARS = re.compile(r"[^A-Za-z0-9._~-]")


def _digest(key: str, length: int = 20) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:length]


def entity_iri(key: str, namespace: str = "name") -> str:
    """Opaque, stable IRI for an entity known by ``key`` within ``namespace``.

    Dialogue corpora (KdConv, DuConv) identify entities by their normalised name, so they
    share the ``name`` namespace and the same name from two such sources is one entity.
    """
    return f"{ENTITY}{safe_segment(namespace)}/{_digest(key)}"


def relation_iri(relation_id: str) -> str:
    """IRI of a schema relation (``relation_id`` is the schema's ASCII id)."""
    return RELATION + safe_segment(relation_id)


def unmapped_relation_iri(label: str) -> str:
    """IRI for a relation the schema does not declare, derived from its label."""
    return f"{RELATION}x/{_digest(label, 16)}"


def class_iri(type_id: str) -> str:
    return CLASS + safe_segment(type_id)


def graph_iri(*parts: str) -> str:
    """Named graph of one source, e.g. ``graph_iri("kdconv", "kb_travel")``."""
    return GRAPH + "/".join(safe_segment(p) for p in parts)


def safe_segment(text: str) -> str:
    """An IRI path segment: unsafe characters percent-encoded, so it cannot escape its place."""
    return "".join(
        ch if not _UNSAFE_IRI_CHARS.match(ch) else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in text
    )


# Predicates that describe entities and relations rather than state facts about them.
META_PREDICATES = frozenset(
    {
        RDF_TYPE,
        RDFS_LABEL,
        SKOS_ALT_LABEL,
        OWL_SAME_AS,
        PROV_SOURCE,
        KIND,
        "http://schema.org/description",
        "http://www.w3.org/2004/02/skos/core#prefLabel",
        "http://schema.org/name",
        ONTO + "labelLanguage",
        ONTO + "sourceUrl",
    }
)
DERIVED_GRAPHS = GRAPH + "derived/"

# Wikidata statement nodes (qualifiers, units, ranks) describe facts; the facts themselves are the
# direct claims. Whole-graph stages (stats, derive, embed) read only the latter.
WIKIDATA_ENTITY = "http://www.wikidata.org/entity/"
WIKIDATA_PROP = "http://www.wikidata.org/prop/"
WIKIDATA_DIRECT = WIKIDATA_PROP + "direct/"
STATEMENT_NODE = WIKIDATA_ENTITY + "statement/"
WIKIBASE = "http://wikiba.se/ontology#"


def is_fact(subject: str, predicate: str) -> bool:
    """Whether a triple states a fact about an entity (not a label, type or statement-node detail).
    ``kgforge.store.tables.fact_filter`` is the same rule as a polars expression."""
    if predicate in META_PREDICATES or subject.startswith(STATEMENT_NODE) or predicate.startswith(WIKIBASE):
        return False
    return not predicate.startswith(WIKIDATA_PROP) or predicate.startswith(WIKIDATA_DIRECT)
