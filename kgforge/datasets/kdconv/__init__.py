"""KdConv (Zhou et al., ACL 2020): Chinese multi-domain knowledge-driven conversation, each message annotated
with the knowledge-base triples (``attrs``) it uses."""

from kgforge.core.datasets import Dataset

DATASET = Dataset(
    name="kdconv",
    title="KdConv",
    description="Chinese multi-domain (film, music, travel) conversations, each message's knowledge in attrs",
    languages=("zh",),
    homepage="https://github.com/thu-coai/KdConv",
)
