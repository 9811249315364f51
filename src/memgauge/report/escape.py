"""Untrusted text made safe for the files people open (Markdown and LaTeX tables, CSV exports)
and for the terminal.

Names of subjects, tasks, evaluators and datasets, queries, memory texts, outputs and error
reasons all come from someone else. Written raw, they can inject:

- into Markdown (`summary.md`, the audit's `report.md`, the gate's pull-request summary): raw
  HTML (`<img onerror=...>`, which many renderers pass through), links and images, emphasis,
  a `|` that splits a table cell, a newline that ends a table row or starts a block.
  `md_text` collapses every run of whitespace (line breaks included) to one space, writes
  `&`, `<` and `>` as entities, a NUL as U+FFFD (as CommonMark reads it), and backslash-escapes the punctuation that means something
  inline (CommonMark: a backslash before ASCII punctuation gives the character itself), as
  far as it means something: `_` at a word's edge, `[` or `(` right after a `]`. Text that
  starts a line (a heading, a list item) is read for block markers too, and text that ends a
  heading for its closing `#`s: a leading `#`, bullet, `1.` or `===`/`---` line and a
  trailing ` #` run are escaped wherever the text goes (`support bot #` lost its `#` at the
  end of `# Memory audit: ...`). Not for code spans, where a backslash is literal: untrusted
  text is never put in one.
- into LaTeX (the comparison table `--format latex` writes for a paper): backslash, `&`, `%`, `$`,
  `#`, `_`, `{`, `}`, `~`, `^` are commands, comments, math or cell breaks, and `<`, `>`, `|`
  print other glyphs in the default font encoding. `latex_text` writes each as the text
  command or escaped character that prints it, on one line (control characters become
  spaces).
- into a spreadsheet (the CSV export): a cell that starts with `=`, `+`, `-`, `@`, a tab or a
  carriage return is run as a formula by Excel, LibreOffice and Google Sheets. `csv_cell`
  prefixes such text with a single quote (OWASP, "CSV Injection"); numbers are never touched,
  and neither is text that is a plain decimal number (`-0.5`), which no spreadsheet runs.
- into the terminal (every table and line `rich` prints): `[...]` is read as a style and
  disappears (`pip install 'memgauge[anthropic]'` prints as `pip install 'memgauge'`), and
  `:name:` as an emoji. `term` makes a `rich.text.Text`, which prints as itself on any
  console; the CLI's console (`cli._common.console`) reads no markup or emoji at all, so a
  line that styles words builds them with `term(..., style)`.
- into XML (the JUnit document): ElementTree escapes `<`, `&` and quotes, but writes raw the
  characters XML 1.0 cannot hold at all (control characters but tab and line breaks, lone
  surrogates, U+FFFE, U+FFFF): a subject's error with a colour escape (`\x1b[31m`) made a
  document no CI server parses. `xml_text` writes each as `#x1B`, as pytest's JUnit writer does.
"""

from __future__ import annotations

import re
from typing import Any

from rich.text import Text

__all__ = ["csv_cell", "encodable", "latex_text", "md_text", "term", "xml_text"]

# always meaningful inline: escapes, code spans, emphasis, strikethrough, GitHub math, cells
_MD_ALWAYS = re.compile(r"([\\`*~$|])")
# `_` opens or closes emphasis only at a word's edge (CommonMark: never inside a word), and
# a link or an image needs `](` or `][`: escaping those leaves names and CIs readable
_MD_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
_MD_LINK = re.compile(r"\](?=[(\[])")
# at the start, what opens a block on a line of its own (an ATX heading, a bullet or ordered
# list item, a setext underline or thematic break; a lone `-` is the tables' placeholder for
# nothing, a block only on a line of its own, where no writer puts a text; a `[LABEL]` that
# ends the text or is followed by `:`, which in `- {name}: n/a` is a link reference
# definition, the line gone); at the end, a heading's closing sequence
_MD_BLOCK_START = re.compile(
    r"^(?:#|\[(?=[^\]]*\](?::|$))|[-+](?=\s)|\+$|=+$|-{2,}$)|^(\d{1,9})([.)])(?=\s|$)"
)
_MD_HEADING_END = re.compile(r"(?:^|(?<=\s))#(?=#*$)")
_MD_CHARS = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\x00": "\ufffd"})
_LATEX = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "<": r"\textless{}",
        ">": r"\textgreater{}",
        "|": r"\textbar{}",
    }
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _one_line(value: Any) -> str:
    return " ".join(str(value).split())


def plain_cell(value: Any) -> str:
    """`value` on one line for a table drawn as plain text (a CI server's test output): nothing
    escaped but the cell separator."""
    return _one_line(value).replace("|", "\\|")


def md_text(value: Any) -> str:
    """`value` as inline Markdown text that renders as itself, on one line, safe in a table
    cell: no HTML, no link, no emphasis, no cell or row break. A NUL, which CommonMark reads
    as U+FFFD, is written so (a file holding one is binary to grep and to a diff)."""
    text = _MD_ALWAYS.sub(r"\\\1", _one_line(value).translate(_MD_CHARS))
    text = _MD_EDGE_UNDERSCORE.sub(r"\\_", text)
    text = _MD_BLOCK_START.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[0]}", text)
    text = _MD_HEADING_END.sub(r"\\#", text)
    return _MD_LINK.sub("]\\\\", text)


def term(value: Any, style: str = "") -> Text:
    """`value` as terminal text that prints as itself (no markup, no emoji), in `style`."""
    return Text(str(value), style=style)


def latex_text(value: Any) -> str:
    """`value` as LaTeX text that prints as itself, on one line: no command, math, comment,
    group or cell break gets through."""
    return _one_line(_CONTROL.sub(" ", str(value))).translate(_LATEX)


#: half of a surrogate pair: JSON can hold one ("\\ud800"), so a stored output can, but UTF-8
#: cannot encode it, and a page or a file holding one could be neither sent nor written
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """`text` with each lone surrogate shown as U+FFFD (what a UTF-8 decoder shows for bytes it
    cannot read), so that a page or a CSV file holding a stored value encodes."""
    try:
        # UTF-8 refuses surrogates and nothing else: a text it encodes has none, and is
        # returned as it is (LoCoMo's report.html, 7.7 million characters: its encoding is a
        # third of a scan for the class, which is at every character of it)
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


#: what XML 1.0 cannot hold (its `Char` production leaves these out)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """`text` for an XML attribute or element: each character XML 1.0 cannot hold as `#xHH`
    (`#xHHHH` past 0xFF), the form pytest's JUnit XML gives it; the rest ElementTree escapes."""
    return _NOT_XML.sub(lambda m: f"#x{ord(m.group()):02X}", text)


def csv_cell(value: Any) -> Any:
    """`value` for a CSV cell: text a spreadsheet would run as a formula gets a leading `'`; a
    lone surrogate is shown as U+FFFD (`encodable`)."""
    if isinstance(value, str):
        value = encodable(value)
    if (
        isinstance(value, str)
        and value.startswith(_FORMULA_START)
        and not _PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value
