"""Separator presets for source code and markup (docs/splitters.md#language-presets).

Every preset is a tuple of regular expressions, most significant boundary first, ending with the generic tail
(paragraph ``\\n\\n``, line ``\\n``, space, character) unless the language says otherwise. Structural boundaries are
zero-width lookaheads after a line break (``\\n(?=…)``), so with ``keep_separator="start"`` the keyword starts the
next piece and no text is consumed. "Column 0" means at the start of a line.

Two presets carry a rule besides their separators (:class:`LanguageRules`):
- Markdown: separator matches inside fenced code blocks (CommonMark rules, ``markdown/fences.py``) are ignored at
  every level above line level, so a fence is cut from its content only when the block alone is too big.
- Python: a piece made only of decorator lines is glued to the following piece, so decorators stay with the
  function or class they decorate.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["Language", "LanguageRules", "get_language_rules", "rules_for_separators"]


class Language(str, Enum):
    """Programming and markup languages with a separator preset (LangChain's member names and values)."""

    CPP = "cpp"
    GO = "go"
    JAVA = "java"
    KOTLIN = "kotlin"
    JS = "js"
    TS = "ts"
    PHP = "php"
    PROTO = "proto"
    PYTHON = "python"
    R = "r"
    RST = "rst"
    RUBY = "ruby"
    RUST = "rust"
    SCALA = "scala"
    SWIFT = "swift"
    MARKDOWN = "markdown"
    LATEX = "latex"
    HTML = "html"
    SOL = "sol"
    CSHARP = "csharp"
    COBOL = "cobol"
    C = "c"
    LUA = "lua"
    PERL = "perl"
    HASKELL = "haskell"
    ELIXIR = "elixir"
    POWERSHELL = "powershell"
    VISUALBASIC6 = "visualbasic6"


@dataclass(frozen=True, slots=True)
class LanguageRules:
    """A language's separators plus its extra rules.

    Attributes:
        separators: regular expressions, most significant first.
        fence_levels: the first *fence_levels* separators ignore matches inside fenced code blocks (Markdown).
        glue_decorators: glue a piece made only of ``@decorator`` lines to the following piece (Python).
    """

    separators: tuple[str, ...]
    fence_levels: int = 0
    glue_decorators: bool = False


_TAIL = (r"\n\n", r"\n", " ", "")


def _col0(words: str) -> str:
    """A column-0 boundary before any of the ``|``-separated *words* (each followed by a word boundary)."""
    return rf"\n(?=(?:{words})\b)"


def _indented(words: str) -> str:
    """A boundary before a line starting, after any indentation, with one of *words*."""
    return rf"\n(?=[ \t]*(?:{words})\b)"


def _modified(modifiers: str, words: str, indent: bool = True) -> str:
    """A boundary before *words* preceded by any number of *modifiers* (``public static …``)."""
    lead = "[ \t]*" if indent else ""
    return rf"\n(?={lead}(?:(?:{modifiers})[ \t]+)*(?:{words})\b)"


_PY_DECORATORS = r"(?:[ \t]*@[^\n]*\n)*"
_JS_DECLARATIONS = r"\n(?=(?:export[ \t]+(?:default[ \t]+)?)?(?:async[ \t]+function|function|class|const|let|var)\b)"
_JS_CONTROL = _col0("if|for|while|switch|case|default")
_C_CONTROL = _indented("if|for|while|do|switch|case")

_PRESETS: dict[Language, LanguageRules] = {
    Language.PYTHON: LanguageRules(
        (
            rf"\n(?={_PY_DECORATORS}class[ \t])",
            rf"\n(?={_PY_DECORATORS}(?:async[ \t]+)?def[ \t])",
            r"\n(?=@)",
            rf"\n(?={_PY_DECORATORS}[ \t]+(?:async[ \t]+)?def[ \t])",
            *_TAIL,
        ),
        glue_decorators=True,
    ),
    Language.JS: LanguageRules((_JS_DECLARATIONS, _JS_CONTROL, *_TAIL)),
    Language.TS: LanguageRules(
        (
            r"\n(?=(?:(?:export|declare)[ \t]+(?:default[ \t]+)?)*"
            r"(?:interface[ \t]|type[ \t]|enum[ \t]|namespace[ \t]|abstract[ \t]+class[ \t]))",
            _JS_DECLARATIONS,
            _JS_CONTROL,
            *_TAIL,
        )
    ),
    Language.GO: LanguageRules((_col0("func|type|var|const"), _indented("if|for|switch|case|select"), *_TAIL)),
    Language.JAVA: LanguageRules(
        (
            _modified("public|protected|private|static|abstract|final|sealed|strictfp", "class|interface|enum|record"),
            _indented("public|protected|private|static|abstract|final"),
            _indented("if|for|while|switch|case|do|try"),
            *_TAIL,
        )
    ),
    Language.KOTLIN: LanguageRules(
        (
            _modified(
                "public|private|protected|internal|open|abstract|sealed|data|enum|inner|annotation|companion",
                "class|interface|object",
            ),
            _modified("public|private|protected|internal|open|override|suspend|inline", "fun|val|var"),
            _indented("if|for|while|when|do|try"),
            *_TAIL,
        )
    ),
    Language.SCALA: LanguageRules(
        (
            _modified("sealed|abstract|final|case|implicit|private|protected", "class|object|trait|enum"),
            _modified("override|private|protected|implicit|final|lazy", "def|val|var|given"),
            _indented("if|for|while|match|case|do|try"),
            *_TAIL,
        )
    ),
    Language.SWIFT: LanguageRules(
        (
            _modified("public|private|fileprivate|internal|open|final", "class|struct|enum|protocol|extension|actor"),
            _modified("public|private|fileprivate|internal|open|override|static|mutating|final", "func|init|var|let"),
            _indented("if|for|while|repeat|switch|case|guard|do"),
            *_TAIL,
        )
    ),
    Language.CSHARP: LanguageRules(
        (
            _col0("namespace"),
            _modified(
                "public|private|protected|internal|static|abstract|sealed|partial|readonly",
                "class|interface|struct|enum|record",
            ),
            _indented("public|private|protected|internal|static|override|virtual|async"),
            _indented("if|for|foreach|while|switch|case|do|try|using"),
            *_TAIL,
        )
    ),
    Language.PHP: LanguageRules(
        (
            _modified("abstract|final|readonly", "class|interface|trait|enum"),
            _modified("public|private|protected|static|abstract|final", "function"),
            _indented("if|foreach|for|while|do|switch|case|try"),
            *_TAIL,
        )
    ),
    Language.PROTO: LanguageRules(
        (_col0("syntax|package|import|option"), _indented("message|enum|service|oneof|rpc"), *_TAIL)
    ),
    Language.RUBY: LanguageRules((_indented("module|class"), _indented("def"), _indented("if|unless|while|case|begin|do"), *_TAIL)),
    Language.SOL: LanguageRules(
        (
            _col0("pragma|import|contract|interface|library|abstract"),
            _indented("constructor|function|modifier|event|struct|enum"),
            _indented("if|for|while|do|return|emit"),
            *_TAIL,
        )
    ),
    Language.COBOL: LanguageRules(
        (
            r"\n(?=[ \t]*[A-Z0-9-]+[ \t]+DIVISION\b)",
            r"\n(?=[ \t]*[A-Z0-9-]+[ \t]+SECTION\b)",
            r"\n(?=[ \t]*[A-Z0-9][A-Z0-9-]*\.[ \t]*\n)",
            _indented("IF|PERFORM|EVALUATE|MOVE|COMPUTE|CALL|DISPLAY"),
            *_TAIL,
        )
    ),
    Language.R: LanguageRules(
        (
            r"\n(?=[ \t]*(?:[\w.]+[ \t]*(?:<-|<<-|=)[ \t]*)?function\b)",  # function definitions
            r"\n(?=[ \t]*(?:setClass|setMethod|setGeneric|setValidity|setRefClass)\()",  # S4 classes, methods
            _indented("if|else|for|while|repeat"),
            r"\n(?=[ \t]*(?:library|require)\()",  # package loading
            *_TAIL,
        )
    ),
    Language.LUA: LanguageRules((_col0("local[ \t]+function|function|local"), _indented("if|for|while|repeat"), *_TAIL)),
    Language.PERL: LanguageRules((_col0("package"), _indented("sub"), _indented("if|unless|while|until|for|foreach"), *_TAIL)),
    Language.HASKELL: LanguageRules(
        (_col0("module|import|data|newtype|type|class|instance"), r"\n(?=[a-z_][\w']*[ \t])", _indented("where|let|case|if"), *_TAIL)
    ),
    Language.ELIXIR: LanguageRules(
        (
            _indented("defmodule|defprotocol|defimpl"),
            _indented("def|defp|defmacro|defmacrop|defguard|defstruct"),
            _indented("if|unless|case|cond|with|for|receive"),
            *_TAIL,
        )
    ),
    Language.POWERSHELL: LanguageRules(
        (_col0("(?i:function|filter|workflow|class|enum)"), _indented("(?i:param|begin|process|end)"),
         _indented("(?i:if|foreach|for|while|switch|do|try)"), *_TAIL)
    ),
    Language.VISUALBASIC6: LanguageRules(
        (
            r"\n(?=(?i:(?:(?:Public|Private|Friend|Static)[ \t]+)*(?:Sub|Function|Property|Type|Enum)\b))",
            _indented("(?i:If|For|Do|While|Select[ \t]+Case|With)"),
            *_TAIL,
        )
    ),
    Language.RUST: LanguageRules(
        (
            r"\n(?=(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:(?:async|unsafe|const|extern(?:[ \t]+\"[^\"\n]*\")?)[ \t]+)*"
            r"(?:macro_rules!|(?:fn|impl|struct|enum|trait|mod|const|static|type)\b))",
            _indented("if|while|for|loop|match"),
            *_TAIL,
        )
    ),
    Language.LATEX: LanguageRules(
        (
            r"\n(?=\\chapter\*?\{)",
            r"\n(?=\\section\*?\{)",
            r"\n(?=\\subsection\*?\{)",
            r"\n(?=\\subsubsection\*?\{)",
            r"\n(?=[ \t]*\\begin\{(?:enumerate|itemize|description|list|quote|quotation|verse|verbatim|lstlisting"
            r"|align\*?)\})",
            r"\n(?=[ \t]*(?:\$\$|\\\[))",
            *_TAIL,
        )
    ),
    Language.HTML: LanguageRules(
        (
            # LangChain's tags in LangChain's order, each matched only as a whole tag name (``<p`` is not ``<pre``)
            *(
                rf"(?=<(?i:{tag})[\s/>])"
                for tag in (
                    "body", "div", "p", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "span", "table", "tr",
                    "td", "th", "ul", "ol", "header", "footer", "nav", "head", "style", "script", "meta", "title",
                )
            ),
            r"\n",
            " ",
            "",
        )
    ),
    Language.MARKDOWN: LanguageRules(
        (
            *(rf"\n(?=#{{{level}}}[ \t])" for level in range(1, 7)),
            r"\n(?=[ \t]*(?:`{3,}|~{3,}))",  # any indentation: fences nested in list items too
            r"\n(?= {0,3}(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})(?:\n|$))|(?<=\n)\n(?= {0,3}(?:-[ \t]*){3,}(?:\n|$))",
            *_TAIL,
        ),
        fence_levels=9,
    ),
    Language.RST: LanguageRules(
        (
            r"\n(?=[^\n]+\n={3,}[ \t]*\n)",
            r"\n(?=[^\n]+\n-{3,}[ \t]*\n)",
            r"\n(?=[^\n]+\n~{3,}[ \t]*\n)",
            r"\n(?=[^\n]+\n\^{3,}[ \t]*\n)",
            r"\n(?=\.\. )",
            *_TAIL,
        )
    ),
}
_PRESETS[Language.C] = LanguageRules(
    (
        _col0("namespace|template|class|struct|union|enum|typedef"),
        _col0("static|inline|extern|void|int|char|bool|float|double|long|short|unsigned|signed|auto"),
        _C_CONTROL,
        *_TAIL,
    )
)
_PRESETS[Language.CPP] = _PRESETS[Language.C]


def get_language_rules(language: Language | str) -> LanguageRules:
    """The rules of *language* (a :class:`Language` or its value, e.g. ``"python"``).

    Raises:
        ValueError: *language* is not a known language.
    """
    try:
        return _PRESETS[Language(language)]
    except ValueError:
        known = ", ".join(member.value for member in Language)
        raise ValueError(f"Language {language!r} is not supported; known: {known}") from None


def rules_for_separators(separators: list[str] | tuple[str, ...], is_regex: bool) -> LanguageRules | None:
    """The preset whose separators are exactly *separators* (so a hand-built splitter with a preset's separators
    gets its extra rules too), or ``None``."""
    if not is_regex:
        return None
    wanted = tuple(separators)
    for rules in _PRESETS.values():
        if rules.separators == wanted:
            return rules
    return None
