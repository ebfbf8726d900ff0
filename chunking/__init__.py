"""chunking: serverless document chunking for retrieval-augmented generation on Azure Functions.

The package's version is this ``__version__`` (pyproject.toml reads it from here). How the parts fit together:
docs/architecture.md.
"""

__version__ = "0.1.0"
