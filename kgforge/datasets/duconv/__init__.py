"""DuConv (Wu et al., ACL 2019): proactive Chinese conversation towards a two-topic goal over the session's
knowledge triples."""

from kgforge.core.datasets import Dataset

DATASET = Dataset(
    name="duconv",
    title="DuConv",
    description="Chinese proactive conversations led from one topic to another along a goal, knowledge per session",
    languages=("zh",),
    homepage="https://github.com/baidu/knowledge-driven-dialogue",
)
