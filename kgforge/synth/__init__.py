"""``kgforge synth``: dialogues drafted from goals by a model (or the offline templated realiser), every turn
verified against the graph, repaired or dropped, released in the seed dataset's own layout."""
