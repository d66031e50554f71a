"""An example kgforge plug-in: one small module per extension point (see kgforge's docs/extending.md)."""
