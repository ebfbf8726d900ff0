"""Settings of figure descriptions: which describer turns a picture inside a document into text, the vision model
it calls and its budget per document (docs/parsers.md#figure-descriptions, docs/settings.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .values import SettingsError, int_value, str_value

__all__ = ["FIGURE_DESCRIBERS", "VisionOptions"]

#: ``offline``: a picture's text is what local OCR reads (nothing is called); ``azure_openai``: a chat deployment
#: with image input at ``AZURE_OPENAI_ENDPOINT``; ``openai``: an OpenAI(-compatible) chat model at
#: ``OPENAI_BASE_URL``.
FIGURE_DESCRIBERS = ("offline", "azure_openai", "openai")


@dataclass(frozen=True)
class VisionOptions:
    """``FIGURES_DESCRIBER`` [offline], ``VISION_MODEL`` [unset], ``FIGURES_MAX_TOKENS_PER_DOCUMENT`` [50000].

    Attributes:
        describer: one of ``FIGURE_DESCRIBERS``.
        model: the chat model (OpenAI) or deployment name (Azure OpenAI) that takes image input, e.g. ``gpt-4o``;
            required by a describer other than ``offline``.
        max_tokens_per_document: the vision calls of one document (one page range of a long PDF) stop once their
            billed tokens (``usage.total_tokens``: the image, the prompt and the answer) reach this many; the
            figures left keep their caption and OCR text.
    """

    describer: str = "offline"
    model: str = ""
    max_tokens_per_document: int = 50_000

    @property
    def calls_model(self) -> bool:
        """A describer that calls a vision model (not ``offline``)."""
        return self.describer != "offline"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> VisionOptions:
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: an unknown describer, a model describer without ``VISION_MODEL``, a budget under 1
                (the message names the variable).
        """
        describer = str_value(env, "FIGURES_DESCRIBER", "offline").lower()
        if describer not in FIGURE_DESCRIBERS:
            raise SettingsError(f"FIGURES_DESCRIBER must be one of {', '.join(FIGURE_DESCRIBERS)}, got {describer!r}")
        model = str_value(env, "VISION_MODEL")
        if describer != "offline" and not model:
            raise SettingsError(f"FIGURES_DESCRIBER={describer} needs VISION_MODEL (the model or deployment name)")
        return cls(describer=describer, model=model,
                   max_tokens_per_document=int_value(env, "FIGURES_MAX_TOKENS_PER_DOCUMENT", 50_000, 1))
