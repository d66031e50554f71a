"""DuRecDial (Liu et al., ACL 2020) and DuRecDial 2.0 (EMNLP 2021): conversational recommendation over
multiple dialogue types, a goal sequence per session, user profiles and knowledge triples."""

from kgforge.core.datasets import Dataset

DATASET = Dataset(
    name="durecdial",
    title="DuRecDial / DuRecDial 2.0",
    description="Chinese (and, in 2.0, English) recommendation dialogues under a goal sequence, with user profiles",
    languages=("zh", "en"),
    homepage="https://github.com/liuzeming01/DuRecDial",
)
