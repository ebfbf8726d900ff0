"""Generated HTML for the parity tests: documents and fragments built from a small grammar.

Elements either hold only text, only elements, or (less often) both; headers, tables, lists, links, media,
iframes, comments, scripts, entities, CJK, emoji, CRLF and a BOM all occur. Inputs without the features behind a
documented difference are common, so most inputs are compared strictly.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

WORDS = ["alpha", "beta", "gamma", "delta", "x.", "why?", "end;", "Stop!", "a,b", "中文", "東京。", "🙂", "é",
         "&amp;", "&lt;b&gt;", "&nbsp;", "1.5", "ONE", "two", "it's", "(c)", "-", "\u00a0", "don't"]
SPACES = [" ", " ", "  ", "\n", "\r\n", "\t", ""]


TEXT_TAGS = ["p", "span", "b", "div", "td", "li", "code", "h1", "h2", "h3", "a", "em"]
CONTAINERS = ["div", "section", "article", "p", "ul", "table", "tr", "body", "span", "h2", "main"]
MEDIA = ['<img src="http://example.com/i.png" alt="pic">', '<video src="http://example.com/video"></video>',
         '<audio src="http://example.com/audio"></audio>', '<iframe src="http://example.com/frame"></iframe>',
         "<br>", "<hr/>"]
RARE = ["<!-- note -->", "<script>var x = 1;</script>", "<style>p {color: red}</style>", "PRESERVED_0",
        "<![CDATA[raw]]>"]
BLANKS = ["", "", " ", "\n", "\n    "]


def _words(rng: random.Random) -> str:
    return "".join(rng.choice(WORDS) + rng.choice(SPACES) for _ in range(rng.randint(1, 8)))


def _element(tag: str, inner: str) -> str:
    if tag == "a":
        return f'<a href="http://example.com/{len(inner)}">{inner}</a>'
    return f"<{tag}>{inner}</{tag}>"


#: Well-formed variants: flow containers only, and leaves valid where they stand (parsers agree on the tree).
WELL_FORMED_CONTAINERS = ["div", "section", "article", "main"]
WELL_FORMED_LEAVES = ["<p>{}</p>", "<h1>{}</h1>", "<h2>{}</h2>", "<h3>{}</h3>", "<ul><li>{}</li><li>x</li></ul>",
                      "<table><tr><td>{}</td><td>y</td></tr></table>", "<p>a <b>{}</b> c</p>", "<pre>{}</pre>",
                      '<p><a href="http://example.com/">{}</a></p>', "<div>{}</div>", "<p>{}<br>z</p>"]


def _node(rng: random.Random, budget: list[int], depth: int, well_formed: bool) -> str:
    budget[0] -= 1
    if depth > 4 or budget[0] <= 0 or rng.random() < 0.45:
        if well_formed:
            return rng.choice(WELL_FORMED_LEAVES).format(_words(rng))
        return rng.choice(MEDIA) if rng.random() < 0.15 else _element(rng.choice(TEXT_TAGS), _words(rng))
    mixed = rng.random() < 0.25  # text of the element's own between its children
    parts = []
    for _ in range(rng.randint(1, 4)):
        parts.append(_words(rng) if mixed and rng.random() < 0.4 else _node(rng, budget, depth + 1, well_formed))
        parts.append(rng.choice(BLANKS))
    return _element(rng.choice(WELL_FORMED_CONTAINERS if well_formed else CONTAINERS), "".join(parts))


def build_document(rng: random.Random, well_formed: bool = False) -> str:
    """One document or fragment: up to 6 top-level elements (up to about 12 in all, nested up to 5 deep), sometimes
    a rare construct (comment, script, placeholder look-alike) or loose text at the end, a page wrapper, a BOM.
    *well_formed*: only nestings valid in HTML, so lenient parsers build the same tree."""
    budget = [12]
    body = "".join(_node(rng, budget, 0, well_formed) + rng.choice(BLANKS) for _ in range(rng.randint(0, 6)))
    tail = rng.random()
    body += rng.choice(RARE) if tail < 0.1 else _words(rng) if tail < 0.2 else ""
    wrap = rng.random()
    if wrap < 0.1:
        body = f"<!DOCTYPE html><html><head><title>T</title></head><body>{body}</body></html>"
    elif wrap < 0.25:
        body = f"<html><body>{body}</body></html>"
    return ("\ufeff" if rng.random() < 0.1 else "") + body


#: An HTML document or fragment (most are fragments; a few are whole pages with a doctype and a head). Built from
#: a hypothesis-drawn random generator: drawing nested strategies costs more than the splitters being compared.
html_documents = st.randoms(use_true_random=True).map(build_document)
well_formed_documents = st.randoms(use_true_random=True).map(lambda rng: build_document(rng, well_formed=True))
