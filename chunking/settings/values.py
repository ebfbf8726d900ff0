"""Readers of one environment variable each: a default when unset or blank, otherwise the parsed value or a
``SettingsError`` naming the variable. Shared by every settings group of this package."""

from __future__ import annotations

from typing import Callable, Mapping, TypeVar

__all__ = ["SettingsError", "bool_value", "boolean", "int_list", "int_value", "natural", "parsed_value", "positive", "ratio", "str_value"]


class SettingsError(ValueError):
    """A setting has an invalid value; the message names the setting."""


def int_value(env: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise SettingsError(f"{name} must be ≥ {minimum}, got {value}")
    return value


def bool_value(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    raw = str_value(env, name).lower()
    if not raw:
        return default
    if raw not in ("true", "false", "1", "0", "yes", "no"):
        raise SettingsError(f"{name} must be true or false, got {raw!r}")
    return raw in ("true", "1", "yes")


def str_value(env: Mapping[str, str], name: str, default: str = "") -> str:
    raw = env.get(name)
    return default if raw is None or raw.strip() == "" else raw.strip()


_T = TypeVar("_T")


def parsed_value(env: Mapping[str, str], name: str, default: _T, parse: Callable[[str], _T], rule: str) -> _T:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return parse(raw.strip())
    except ValueError:
        raise SettingsError(f"{name} must be {rule}, got {raw!r}") from None


def positive(raw: str) -> int:
    value = int(raw)
    if value < 1:
        raise ValueError(raw)
    return value


def natural(raw: str) -> int:
    value = int(raw)
    if value < 0:
        raise ValueError(raw)
    return value


def int_list(raw: str) -> tuple[int, ...]:
    values = tuple(int(v) for v in raw.split(",") if v.strip())
    if not values or min(values) < 0:
        raise ValueError(raw)
    return values


def ratio(raw: str) -> float:
    value = float(raw)
    if not 0.0 <= value <= 1.0:
        raise ValueError(raw)
    return value


def boolean(raw: str) -> bool:
    lowered = raw.lower()
    if lowered not in ("true", "false", "1", "0", "yes", "no"):
        raise ValueError(raw)
    return lowered in ("true", "1", "yes")


def connection_string(raw: str, name: str) -> str:
    """A storage connection string with the blanks around its ``;``-separated parts and around each part's first
    ``=`` removed (``AccountName = a ; AccountKey = k`` is read as ``AccountName=a;AccountKey=k``, as the portal's
    copy button never writes it but hands often do). Empty parts are dropped.

    Raises:
        SettingsError: a part has no ``=`` (the message names the variable and the part's position, never the
            value, which may hold a key).
    """
    parts = []
    for n, part in enumerate(raw.split(";"), 1):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise SettingsError(f"{name} is not a connection string: part {n} is not Key=Value "
                                "(parts are separated by ';', e.g. AccountName=...;AccountKey=...)")
        parts.append(f"{key.strip()}={value.strip()}")
    return ";".join(parts)


def https_url(env: Mapping[str, str], name: str) -> str:
    """The URL in *name* (``""`` when unset), which must be an ``https://`` URL with a host: an Azure SDK sends
    a Microsoft Entra token only over HTTPS (azure-core's ``BearerTokenCredentialPolicy`` refuses plain HTTP).

    Raises:
        SettingsError: another scheme, or no host (the message shows the scheme and host only, never user-info
            or query, which may hold secrets).
    """
    from urllib.parse import urlsplit

    value = str_value(env, name)
    if not value:
        return value
    try:
        parts = urlsplit(value)
        host = parts.hostname or ""
    except ValueError:
        parts, host = None, ""
    if parts is None or parts.scheme.lower() != "https" or not host:
        shown = f"{parts.scheme}://{host}/…" if parts is not None and parts.scheme else "a value that is not a URL"
        raise SettingsError(f"{name} must be an https:// URL with a host (a token credential is sent only over "
                            f"HTTPS), got {shown}")
    return value
