"""``chunking schema``: the Azure AI Search index definition the current settings create, without contacting any
service."""

from __future__ import annotations

import argparse
import json

from chunking.app.cli.output import fail
from chunking.index.design import bytes_per_vector
from chunking.services import index_schema

__all__ = ["add_parser", "run", "summary_lines"]


def add_parser(sub, summary: str) -> None:
    """Add the ``schema`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    schema = sub.add_parser("schema", help=summary,
                            description="Print the Azure AI Search index definition the current settings create "
                            "(fields, vector profile, vectorizer, compression, semantic configuration, analyzers, "
                            "permission filters), as ingest would create it when the index is missing. Nothing is "
                            "contacted: this works without AZURE_SEARCH_ENDPOINT. docs/search.md#the-index-definition "
                            "explains each part.")
    schema.add_argument("--json", action="store_true",
                        help="print the definition as the REST API's JSON (the body of PUT /indexes/NAME)")
    schema.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Print the definition (``--json``: its REST JSON; otherwise a summary for people); 2 when the settings make
    no valid definition."""
    try:
        definition = index_schema(settings).as_dict()
    except ValueError as exc:
        return fail(args, str(exc))
    if args.json:
        print(json.dumps(definition, indent=2, ensure_ascii=False))
        return 0
    for line in summary_lines(definition):
        print(line)
    return 0


def summary_lines(definition: dict) -> list[str]:
    """The definition (REST JSON) in lines for people: name, each field with its attributes, the vector profile
    with its vectorizer and compression (and the bytes per vector they store), the semantic configuration,
    permission filtering."""
    lines = [f"index {definition['name']}"]
    for field in definition["fields"]:
        flags = [name for name in ("key", "searchable", "filterable", "sortable", "facetable") if field.get(name)]
        if field.get("dimensions"):
            flags.append(f"{field['dimensions']} dimensions, profile {field.get('vectorSearchProfile')}")
        if field.get("analyzer"):
            flags.append(f"analyzer {field['analyzer']}")
        if field.get("permissionFilter"):
            flags.append(f"permission filter {field['permissionFilter']}")
        lines.append(f"  {field['name']:<16} {field['type']:<24} {', '.join(flags)}".rstrip())
    vector = definition.get("vectorSearch") or {}
    vectorizers = {v["name"]: v for v in vector.get("vectorizers") or []}
    compressions = {c["name"]: c for c in vector.get("compressions") or []}
    dims = next((f["dimensions"] for f in definition["fields"] if f.get("dimensions")), 0)
    for profile in vector.get("profiles") or []:
        lines.append(f"vector profile {profile['name']}: algorithm {profile['algorithm']}")
        vectorizer = vectorizers.get(profile.get("vectorizer") or "")
        if vectorizer:
            params = vectorizer.get("azureOpenAIParameters") or {}
            lines.append(f"  vectorizer {vectorizer['name']}: Azure OpenAI {params.get('resourceUri')} deployment "
                         f"{params.get('deploymentId')} ({params.get('modelName')}), the service's managed identity")
        else:
            lines.append("  vectorizer: none (queries must bring their own vector)")
        compression = compressions.get(profile.get("compression") or "")
        kind = {"scalarQuantization": "scalar", "binaryQuantization": "binary"}.get(
            (compression or {}).get("kind", ""), "none")
        truncation = (compression or {}).get("truncationDimension") or 0
        rescoring = (compression or {}).get("rescoringOptions") or {}
        size = bytes_per_vector(dims, kind, truncation) if dims else 0
        detail = f", truncated to {truncation}" if truncation else ""
        detail += f", rescoring x{rescoring['defaultOversampling']:g}" if rescoring.get("enableRescoring") else ""
        lines.append(f"  compression {kind}{detail}: {size} bytes per vector (float32: {4 * dims})")
    for config in (definition.get("semantic") or {}).get("configurations") or []:
        prioritized = config.get("prioritizedFields") or {}
        title = (prioritized.get("titleField") or {}).get("fieldName")
        content = ", ".join(f["fieldName"] for f in prioritized.get("prioritizedContentFields") or [])
        lines.append(f"semantic configuration {config['name']}: content {content}"
                     + (f", title {title}" if title else ""))
    option = definition.get("permissionFilterOption")
    lines.append(f"permission filtering: {option or 'off'}")
    return lines
