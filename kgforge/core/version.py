"""The package version, in a leaf so that any module can name it without importing the public face."""

__version__ = "0.1.0"
