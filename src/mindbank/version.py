"""The package version, importable without loading the server stack (the HTTP client uses it)."""

__version__ = "0.1.0"
