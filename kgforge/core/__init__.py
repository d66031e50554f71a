"""The leaves every stage stands on: vocabulary, errors, schema, quads, quarantine, JSON readers, text,
files (atomic writes, checksums), the one registry shape, argument checks and runtime helpers.

Modules here import nothing from kgforge outside ``kgforge.core``.
"""
