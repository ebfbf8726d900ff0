"""The tiktoken encodings the token-measured splitters use, by encoding or model name (never downloaded).

Its own module because both the splitters' base (``TextSplitter.from_tiktoken_encoder``) and
``TokenTextSplitter`` need it, and the token splitter derives from the base.
"""

from __future__ import annotations

import tiktoken
import tiktoken.model

from chunking.tokens import get_encoding

__all__ = ["resolve_encoding"]


def resolve_encoding(encoding_name: str = "cl100k_base", model_name: str | None = None) -> tiktoken.Encoding:
    """The shipped tiktoken encoding for *model_name* (if given) or *encoding_name*; never downloads.

    Raises:
        ValueError: unknown model, or an encoding not shipped with ``chunking.tokens``.
    """
    if model_name is not None:
        try:
            encoding_name = tiktoken.model.encoding_name_for_model(model_name)
        except KeyError:
            raise ValueError(f"no tiktoken encoding is known for model {model_name!r}") from None
    return get_encoding(encoding_name)
