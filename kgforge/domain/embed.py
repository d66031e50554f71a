"""Knowledge-graph embeddings: ``embed`` and ``related`` (torch and PyKEEN load when one of them runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgforge.core.records import options_record
from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.embed import EmbedConfig
    from kgforge.embed.related import RelatedReport
    from kgforge.embed.train import EmbedReport


class EmbedMethods(DomainBase):
    def embed(
        self,
        config: EmbedConfig | None = None,
        *,
        name: str = "default",
        resume: bool = False,
        progress: bool = False,
        **fields: Any,
    ) -> EmbedReport:
        """Train a PyKEEN model as ``config`` says (:class:`~kgforge.embed.EmbedConfig`; or its fields as
        keywords, ``model="RotatE", dim=64``) into ``models/<name>``; the loss and validation curves go to
        ``models/<name>-training.png``. The bundle records the build it was trained on."""
        from kgforge.embed import EmbedConfig, embed  # lazy: torch and PyKEEN take seconds to load

        settings = options_record(EmbedConfig, config, fields)
        return embed(self.snapshot(), settings, name=name, resume=resume, progress=progress)

    def related(
        self,
        entity: str,
        *,
        k: int = 10,
        model: str = "default",
        exclude_neighbours: bool = False,
        type_: str | None = None,
        device: str = "auto",
    ) -> RelatedReport:
        """The ``k`` entities nearest ``entity`` (a label or IRI) in the model bundle ``models/<model>``; names
        are joined by the links of the build the model was trained on (the published one's, with a warning,
        when the domain no longer keeps it)."""
        from kgforge.embed.related import related  # lazy: loads torch

        return related(
            self._published() or self.paths,  # a bundle answers on its own where no build is published
            entity,
            k=k,
            model=model,
            exclude_neighbours=exclude_neighbours,
            type_=type_,
            device=device,
        )
