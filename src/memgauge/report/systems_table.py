"""Several systems compared, as the table of a paper: a row per system, a column per measure,
the best value of each measure in bold, and after each value superscript letters naming the
systems it is significantly better than (each system gets a letter, as ranx's `Report` does).

Three media, one content: the terminal (rich), Markdown (GitHub renders `<sup>`), and LaTeX
with booktabs rules (`\\toprule`, `\\midrule`, `\\bottomrule`; needs `\\usepackage{booktabs}`).
"Best" is judged on the value as printed, so every value that prints equal to the best is
bold. The caption says which test, which correction over which family, and alpha.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from string import ascii_lowercase

from rich.table import Table
from rich.text import Text

from memgauge.report.escape import latex_text, md_text
from memgauge.report.fmt import fmt_num as _value
from memgauge.stats import TEST_NAMES, SystemsComparison

__all__ = ["caption", "labels", "systems_latex", "systems_markdown", "systems_table"]

_SUPERSCRIPT = dict(zip(ascii_lowercase, "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖᑫʳˢᵗᵘᵛʷˣʸᶻ", strict=True))


def labels(n: int) -> list[str]:
    """a, b, ..., z, then aa, ab, ... (as spreadsheet columns): one per system."""
    out: list[str] = []
    for i in range(n):
        label = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            label = ascii_lowercase[r] + label
        out.append(label)
    return out


def _marks(names: Sequence[str]) -> str:
    # past 26 systems the letters run to two, and "aab" would be ambiguous
    return "".join(names) if all(len(n) == 1 for n in names) else ",".join(names)


def _best(cmp: SystemsComparison, measure: str, digits: int) -> set[int]:
    printed = {
        i: float(_value(v, digits)) for i, v in enumerate(cmp.means[measure]) if v is not None
    }
    if len(printed) < 2:
        return set()
    top = max(printed.values())
    return {i for i, v in printed.items() if v == top}


def _shown(cmp: SystemsComparison, measure: str, i: int, digits: int) -> str:
    """System `i`'s mean of `measure` as printed; a mean of nothing is n/a with its count."""
    v = cmp.means[measure][i]
    return _value(v, digits) if v is not None else f"n/a ({cmp.counts[measure][i]} scored)"


def _correction_text(cmp: SystemsComparison) -> str:
    measures = sum(
        any(p.measure == m and p.p_value is not None for p in cmp.pairs) for m in cmp.measures
    )
    if cmp.test == "tukey":
        if cmp.correction == "bonferroni" and measures > 1:
            across = f"Bonferroni-corrected across the {measures} measures"
            return f"adjusted over each measure's pairs, {across}"
        return "adjusted over each measure's pairs"
    if cmp.correction == "none":
        return "no correction for multiple comparisons"
    name = "Holm" if cmp.correction == "holm" else "Bonferroni"
    if cmp.family == "table":
        return f"{name}-corrected over the {cmp.family_size} comparisons of the table"
    per = max((sum(p.measure == m for p in cmp.pairs) for m in cmp.measures), default=0)
    return f"{name}-corrected over the {per} comparisons of each measure"


def caption(
    cmp: SystemsComparison, *, esc: Callable[[str], str] = str, alpha: str | None = None
) -> str:
    """What the marks mean: the test, the correction and its family, alpha; then the notes.
    `esc` escapes the text for a medium; `alpha` is the medium's own "p < alpha". Empty for a
    single system: nothing is compared."""
    if len(cmp.systems) < 2:
        return ""
    test = TEST_NAMES[cmp.test]
    pairs = "against the first system" if cmp.pairing == "baseline" else "between every pair"
    if cmp.test == "fisher":
        pairs += f" ({cmp.n_permutations:,} random sign flips)"
    head = (
        "Best value per measure in bold. A superscript names the systems a value is "
        f"significantly better than ({test} {pairs}; {_correction_text(cmp)};"
    )
    text = esc(head) + " " + (alpha or esc(f"p < {cmp.alpha:g}")) + ")."
    for measure, note in cmp.notes.items():
        text += " " + esc(f"{measure}: {note}.")
    return text


def systems_table(cmp: SystemsComparison, *, digits: int = 4) -> Table:
    """The comparison for a terminal: letters and names, bold best, superscript marks (the
    caption goes below it, at the terminal's width)."""
    letters = labels(len(cmp.systems))
    table = Table()
    table.add_column("")
    table.add_column("system")
    for m in cmp.measures:
        table.add_column(m, justify="right")
    best = {m: _best(cmp, m, digits) for m in cmp.measures}
    for i, (letter, name) in enumerate(zip(letters, cmp.systems, strict=True)):
        cells: list[Text | str] = [letter, Text(name)]
        for m in cmp.measures:
            cell = Text(_shown(cmp, m, i, digits), style="bold" if i in best[m] else "")
            beaten = [letters[j] for j in cmp.beaten(m, i)]
            if beaten and all(len(b) == 1 for b in beaten):
                cell.append("".join(_SUPERSCRIPT[b] for b in beaten))
            elif beaten:
                cell.append("^" + _marks(beaten))
            cells.append(cell)
        table.add_row(*cells)
    return table


def systems_markdown(cmp: SystemsComparison, *, digits: int = 4) -> str:
    """The comparison as a Markdown table with its caption below; names escaped."""
    letters = labels(len(cmp.systems))
    best = {m: _best(cmp, m, digits) for m in cmp.measures}
    lines = [
        "| | System | " + " | ".join(md_text(m) for m in cmp.measures) + " |",
        "|---|---|" + "---:|" * len(cmp.measures),
    ]
    for i, (letter, name) in enumerate(zip(letters, cmp.systems, strict=True)):
        cells = [letter, md_text(name)]
        for m in cmp.measures:
            value = _shown(cmp, m, i, digits)
            cell = f"**{value}**" if i in best[m] else value
            beaten = [letters[j] for j in cmp.beaten(m, i)]
            cells.append(cell + (f"<sup>{_marks(beaten)}</sup>" if beaten else ""))
        lines.append("| " + " | ".join(cells) + " |")
    text = caption(cmp, esc=md_text)
    return "\n".join(lines) + "\n" + (f"\n{text}\n" if text else "")


def systems_latex(cmp: SystemsComparison, *, digits: int = 4, label: str = "tab:systems") -> str:
    """The comparison as a LaTeX `table` with booktabs rules; needs `\\usepackage{booktabs}`.

    Each value is followed by its marks and, as `\\hphantom`, the letters it does not carry,
    so the numbers of a column line up whatever their marks."""
    letters = labels(len(cmp.systems))
    best = {m: _best(cmp, m, digits) for m in cmp.measures}
    lines = [
        "% needs \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\caption{" + caption(cmp, esc=latex_text, alpha=f"$p < {cmp.alpha:g}$") + "}",
        "\\label{" + latex_text(label) + "}",
        "\\begin{tabular}{ll" + "r" * len(cmp.measures) + "}",
        "\\toprule",
        " & System & " + " & ".join(latex_text(m) for m in cmp.measures) + " \\\\",
        "\\midrule",
    ]
    for i, (letter, name) in enumerate(zip(letters, cmp.systems, strict=True)):
        cells = [letter, latex_text(name)]
        others = [letters[j] for j in range(len(letters)) if j != i]
        for m in cmp.measures:
            value = _shown(cmp, m, i, digits)
            cell = f"\\textbf{{{value}}}" if i in best[m] else value
            beaten = [letters[j] for j in cmp.beaten(m, i)]
            hidden = [x for x in others if x not in beaten]
            if beaten:
                cell += f"$^{{{_marks(beaten)}}}$"
            if hidden:
                cell += f"\\hphantom{{$^{{{_marks(hidden)}}}$}}"
            cells.append(cell)
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"
