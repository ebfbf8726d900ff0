"""Settings of figure images: whether the pictures of a document are stored as PNG files that its chunks point
to, and where (docs/parsers.md#figure-images, docs/settings.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .values import SettingsError, bool_value, str_value

__all__ = ["FigureImageOptions"]

# A blob container name: 3 to 63 lowercase letters, digits and single hyphens, a letter or digit at each end
# ("Naming and referencing containers, blobs, and metadata" on learn.microsoft.com).
_CONTAINER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


@dataclass(frozen=True)
class FigureImageOptions:
    """``FIGURES_STORE`` [true], ``FIGURES_CONTAINER`` [figures].

    Attributes:
        store: each picture a document's parser keeps (the rules of docs/parsers.md#pictures-in-documents: no
            icons, no repeats, at most ``FIGURES_MAX_PER_DOCUMENT``), the page of an image file and a figure region
            Document Intelligence finds in a PDF are stored as a PNG, and the chunks holding them carry its URL
            (``image_urls``); ``false`` stores none and leaves ``image_urls`` empty.
        container: the blob container of those PNG files, on the app's storage, when the ledger is the storage
            table (the Functions); a local run keeps them in the folder ``CHUNKING_STATE_DIR/figures``.
    """

    store: bool = True
    container: str = "figures"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> FigureImageOptions:
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: ``FIGURES_STORE`` is not a boolean, or ``FIGURES_CONTAINER`` is not a valid blob
                container name (the message names the variable).
        """
        container = str_value(env, "FIGURES_CONTAINER", "figures")
        if not (3 <= len(container) <= 63 and set(container) <= _CONTAINER_CHARS and container[0] != "-"
                and container[-1] != "-" and "--" not in container):
            raise SettingsError("FIGURES_CONTAINER must be a blob container name (3-63 lowercase letters, digits "
                                f"and single hyphens), got {container!r}")
        return cls(store=bool_value(env, "FIGURES_STORE", True), container=container)
