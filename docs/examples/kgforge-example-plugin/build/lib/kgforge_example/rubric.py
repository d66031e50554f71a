"""Rubric ``film-talk``: its TOML file, shipped inside the package."""

from importlib import resources

FILM_TALK = resources.files("kgforge_example").joinpath("rubrics", "film-talk.toml")
