"""Which parser reads each file format, and how Azure AI Document Intelligence is reached.

With ``DOCUMENT_INTELLIGENCE_ENDPOINT`` set, the formats the layout model reads (PDF, images, DOCX, PPTX, XLSX,
HTML) go to Document Intelligence; ``PARSERS`` sends single extensions back to the local parser or to the
service (``PARSERS=.pdf=local,.xlsx=local``). Without the endpoint everything is parsed locally, and images and
scanned PDFs are refused with a reason that names the endpoint setting.

Service limits (Document Intelligence "Service quotas and limits", v4.0, Standard S0 tier): a document of at most
500 MB and 2,000 analysed pages per request; the free F0 tier allows 4 MB and analyses 2 pages. The defaults below
are S0's, and F0 users lower them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

# The extensions the layout model reads (the format table's ``docintel`` column) go to Document Intelligence
# when it is configured.
from chunking.formats import DOCINTEL_EXTENSIONS

from .values import SettingsError, int_value, str_value

__all__ = ["DocumentIntelligenceSettings", "PARSER_NAMES"]

#: Values of ``PARSERS``: the local parser of the format, or Document Intelligence.
PARSER_NAMES = ("local", "docintel")

_MiB = 1024 * 1024


@dataclass(frozen=True)
class DocumentIntelligenceSettings:
    """Document Intelligence and the parser choice per extension.

    Environment variables (defaults in brackets): ``DOCUMENT_INTELLIGENCE_ENDPOINT`` [none: every format parsed
    locally], ``DOCUMENT_INTELLIGENCE_API_KEY`` [none: Entra ID, the role "Cognitive Services User"],
    ``DOCUMENT_INTELLIGENCE_API_VERSION`` [2024-11-30], ``DOCUMENT_INTELLIGENCE_MODEL`` [prebuilt-layout],
    ``DOCUMENT_INTELLIGENCE_PAGES_PER_REQUEST`` [2000], ``DOCUMENT_INTELLIGENCE_MAX_BYTES`` [524288000],
    ``PARSERS`` [none] (``.ext=local|docintel`` pairs, comma-separated).

    Attributes:
        endpoint: ``https://<name>.cognitiveservices.azure.com`` ('' = not configured).
        api_key: a key of the resource; '' = Entra ID (``DefaultAzureCredential``).
        pages_per_request: pages of a PDF analysed by one request: longer PDFs are analysed in page ranges.
        max_bytes: the largest file sent (the service refuses larger ones).
        parsers: extension → ``"local"`` or ``"docintel"``, from ``PARSERS``.
    """

    endpoint: str = ""
    api_key: str = ""
    api_version: str = "2024-11-30"
    model_id: str = "prebuilt-layout"
    pages_per_request: int = 2000
    max_bytes: int = 500 * _MiB
    parsers: Mapping[str, str] = field(default_factory=dict)

    def uses_service(self, extension: str) -> bool:
        """True when files with *extension* (lower or upper case, with its dot) are parsed by Document Intelligence."""
        choice = self.parsers.get(extension.lower())
        if choice is not None:
            return choice == "docintel"
        return bool(self.endpoint) and extension.lower() in DOCINTEL_EXTENSIONS

    @property
    def fingerprint(self) -> str:
        """What enters the version of a document the service parses: another model or API version reads a file
        differently, so the document is parsed again."""
        return f"docintel:{self.model_id}:{self.api_version}"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "DocumentIntelligenceSettings":
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: a malformed value; ``PARSERS`` naming an unknown parser, or sending to Document
                Intelligence an extension it does not read or while ``DOCUMENT_INTELLIGENCE_ENDPOINT`` is unset.
        """
        endpoint = str_value(env, "DOCUMENT_INTELLIGENCE_ENDPOINT").rstrip("/")
        parsers = _parsers(env.get("PARSERS", ""))
        for extension, choice in parsers.items():
            if choice == "docintel" and extension not in DOCINTEL_EXTENSIONS:
                raise SettingsError(f"PARSERS: Document Intelligence does not read {extension} files; it reads "
                                    f"{', '.join(sorted(DOCINTEL_EXTENSIONS))}")
            if choice == "docintel" and not endpoint:
                raise SettingsError(f"PARSERS sends {extension} to Document Intelligence, but "
                                    "DOCUMENT_INTELLIGENCE_ENDPOINT is not set")
        if endpoint and not endpoint.startswith(("https://", "http://")):
            raise SettingsError(f"DOCUMENT_INTELLIGENCE_ENDPOINT must be a URL, got {endpoint!r}")
        return cls(
            endpoint=endpoint,
            api_key=str_value(env, "DOCUMENT_INTELLIGENCE_API_KEY"),
            api_version=str_value(env, "DOCUMENT_INTELLIGENCE_API_VERSION", cls.api_version),
            model_id=str_value(env, "DOCUMENT_INTELLIGENCE_MODEL", cls.model_id),
            pages_per_request=int_value(env, "DOCUMENT_INTELLIGENCE_PAGES_PER_REQUEST", cls.pages_per_request, 1),
            max_bytes=int_value(env, "DOCUMENT_INTELLIGENCE_MAX_BYTES", cls.max_bytes, 1),
            parsers=parsers,
        )


def _parsers(raw: str) -> dict[str, str]:
    result = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        extension, sep, name = item.partition("=")
        extension, name = extension.strip().lower(), name.strip().lower()
        if not sep or not extension.startswith(".") or name not in PARSER_NAMES:
            raise SettingsError(f"PARSERS must look like '.pdf=local,.png=docintel' (parsers: "
                                f"{', '.join(PARSER_NAMES)}), got {item!r}")
        result[extension] = name
    return result
