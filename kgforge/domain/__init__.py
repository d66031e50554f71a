"""The methods of :class:`kgforge.api.Domain`, one module per stage of the pipeline.

``Domain`` (in :mod:`kgforge.api`) is made of these mixins, each a subclass of :class:`~kgforge.domain.base.
DomainBase` (the domain's name, workdir and paths, and :meth:`~kgforge.domain.base.DomainBase.snapshot`, the one
place a reader's build is opened). A method imports the stage function it calls when it runs (``# lazy:
start-up``): importing :mod:`kgforge.api` loads no stage (``tests/test_cli_startup.py``). A new stage adds a
module here with its mixin and names the mixin among ``Domain``'s bases (CONTRIBUTING.md). The API's top-level
functions that take a domain's name live here too (:mod:`kgforge.domain.evaluation`,
:func:`kgforge.domain.grounding.train_grounding`): each opens that domain's build through ``DomainBase``.
"""
