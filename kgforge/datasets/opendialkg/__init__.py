"""OpenDialKG (Moon et al., ACL 2019): English conversations whose turns walk paths of a Freebase-derived
knowledge graph."""

from kgforge.core.datasets import Dataset

DATASET = Dataset(
    name="opendialkg",
    title="OpenDialKG",
    description="English conversations paired with the knowledge-graph paths they walk",
    languages=("en",),
    homepage="https://github.com/facebookresearch/opendialkg",
)
