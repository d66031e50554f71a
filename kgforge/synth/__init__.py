"""``kgforge synth``: dialogues drafted from goals by a model (or the offline templated realiser), every turn
verified against the graph, repaired or dropped, released in the seed dataset's own layout (docs/synth.md).

``client`` (the one adapter to the LLM client) <- ``model`` <- ``prompts`` <- ``verify`` (the one adapter to the
grounder) <- ``realise`` <- ``duconv`` | ``kdconv`` | ``durecdial`` (each style's own code) <- ``styles`` (the
table) <- ``material`` <- ``replies`` <- ``loop`` (one goal) <- ``run`` (the command).
"""

from kgforge.synth.run import SynthOptions, SynthPlan, SynthReport, plan, synth
from kgforge.synth.styles import STYLES as SYNTH_STYLES

__all__ = ["SYNTH_STYLES", "SynthOptions", "SynthPlan", "SynthReport", "plan", "synth"]
