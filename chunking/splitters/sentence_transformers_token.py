"""Token windows in a sentence-transformers model's own tokens (LangChain's ``SentenceTransformersTokenTextSplitter``).

The model is loaded by ``sentence_transformers.SentenceTransformer`` from a local path or its cache: this package
never downloads it. Windows follow :func:`~chunking.splitters.token_windows.split_text_on_tokens` over the model
tokenizer's ids without its start and end special tokens.
"""

from __future__ import annotations

from typing import Any

from chunking.splitters.base import TextSplitter
from chunking.splitters.extras import import_extra
from chunking.splitters.token_windows import Tokenizer, split_text_on_tokens

__all__ = ["SentenceTransformersTokenTextSplitter"]

_NO_TRUNCATION = 2**32  # as max_length: the tokenizer never truncates


class SentenceTransformersTokenTextSplitter(TextSplitter):
    """Split text into windows of a sentence-transformers model's tokens.

    Args:
        chunk_overlap: tokens shared by consecutive windows (default 50).
        model_name: the model (default ``"sentence-transformers/all-mpnet-base-v2"``), already available locally.
        tokens_per_chunk: window size; default the model's ``max_seq_length``.
        model_kwargs: keyword arguments for ``SentenceTransformer``.
        **kwargs: see :class:`TextSplitter`.

    Raises:
        ImportError: sentence-transformers is not installed (``pip install chunking[sentence-transformers]``).
        ValueError: *tokens_per_chunk* over the model's limit, or missing when the model has none.
    """

    def __init__(self, chunk_overlap: int = 50, model_name: str = "sentence-transformers/all-mpnet-base-v2",
                 tokens_per_chunk: int | None = None, model_kwargs: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(chunk_overlap=chunk_overlap, **kwargs)
        module = import_extra("sentence_transformers", "sentence-transformers", "sentence-transformers")
        self.model_name = model_name
        self._model = module.SentenceTransformer(model_name, **(model_kwargs or {}))
        self.tokenizer = self._model.tokenizer
        self.maximum_tokens_per_chunk = self._model.max_seq_length
        if tokens_per_chunk is None and self.maximum_tokens_per_chunk is None:
            raise ValueError("the model has no maximum token count: give tokens_per_chunk")
        self.tokens_per_chunk = tokens_per_chunk if tokens_per_chunk is not None else self.maximum_tokens_per_chunk
        if self.maximum_tokens_per_chunk is not None and self.tokens_per_chunk > self.maximum_tokens_per_chunk:
            raise ValueError(
                f"The token limit of the models '{model_name}' is: {self.maximum_tokens_per_chunk}. "
                f"Argument tokens_per_chunk={self.tokens_per_chunk} > maximum token limit."
            )

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, max_length=_NO_TRUNCATION, truncation="do_not_truncate"))

    def count_tokens(self, *, text: str) -> int:
        """Tokens of *text*, start and end special tokens included."""
        return len(self._encode(text))

    def split_text(self, text: str) -> list[str]:
        """Decoded windows of *text*'s tokens (start and end special tokens left out)."""
        tokenizer = Tokenizer(self._chunk_overlap, self.tokens_per_chunk, self.tokenizer.decode,
                              lambda t: self._encode(t)[1:-1])
        return split_text_on_tokens(text=text, tokenizer=tokenizer)
