"""A formulation's mathematics for a terminal or a LaTeX document.

``describe`` texts are Markdown with LaTeX math (``$...$``, ``$$...$$``), which is
what the documentation renders. On a terminal the LaTeX would be noise:
:func:`to_text` writes the same mathematics in plain text with Unicode symbols
(``∑_{d ∈ D_i} x[i,d] = 1``); :func:`to_latex` turns the Markdown into LaTeX.

Examples
--------
>>> print(to_text("For all tasks: $$\\\\sum_{d \\\\in D_i} x_{i,d} = 1 \\\\qquad \\\\forall i \\\\in T$$"))
For all tasks:
<BLANKLINE>
    ∑_{d ∈ D_i} x[i,d] = 1    ∀ i ∈ T
>>> print(to_text("### `memory`\\n\\n$\\\\mathit{end}_i \\\\ge r_i$ and `x`"))
memory
------
<BLANKLINE>
end_i ≥ r_i and x
>>> print(to_latex("## Formulation `jssp`\\n\\nText with $x_{i,d}$.\\n\\n$$C \\\\ge 0$$"))
\\section*{Formulation \\texttt{jssp}}
<BLANKLINE>
Text with $x_{i,d}$.
<BLANKLINE>
\\[C \\ge 0\\]
"""

from __future__ import annotations

import re

#: LaTeX commands and their plain-text form.
SYMBOLS = {
    r"\sum": "∑", r"\ge": "≥", r"\geq": "≥", r"\le": "≤", r"\leq": "≤", r"\ne": "≠", r"\neq": "≠",
    r"\in": "∈", r"\notin": "∉", r"\forall": "∀", r"\exists": "∃", r"\setminus": "∖", r"\cap": "∩",
    r"\cup": "∪", r"\emptyset": "∅", r"\succ": "≻", r"\prec": "≺", r"\cdot": "·", r"\times": "×",
    r"\infty": "∞", r"\ldots": "…", r"\dots": "…", r"\min": "min", r"\max": "max", r"\to": "→",
    r"\sqcup": "⊔", r"\lfloor": "⌊", r"\rfloor": "⌋", r"\lceil": "⌈", r"\rceil": "⌉",
}
#: Spacing commands and their width in spaces.
SPACES = {r"\qquad": "    ", r"\quad": "  ", r"\,": " ", r"\;": " ", r"\:": " ", r"\ ": " ", r"\!": ""}

_WRAPPERS = re.compile(r"\\(?:mathit|mathrm|mathbf|text|operatorname|textrm|texttt)\{([^{}]*)\}")
_SIZES = re.compile(r"\\(?:Big|big|Bigg|bigg|left|right)(?=[()\[\]|.]|\\[{}])")
_BAR = re.compile(r"\\bar\s*\{?([A-Za-z])\}?")
_DOUBLE_SUBSCRIPT = re.compile(r"([A-Za-z])_\{([A-Za-z0-9]+),\s*([A-Za-z0-9]+)\}")
_COMMAND = re.compile(r"\\[A-Za-z]+")


def latex_to_text(math: str) -> str:
    """One LaTeX formula in plain text: symbols as Unicode, ``x_{i,d}`` as ``x[i,d]``."""
    text = re.sub(r"[ \t]+", " ", math)  # the source's spacing; LaTeX's own spaces come below
    text = _WRAPPERS.sub(r"\1", text)
    text = _SIZES.sub("", text)
    text = _BAR.sub(lambda m: m.group(1) + "\u0304", text)
    for command, space in SPACES.items():
        text = text.replace(command, space)
    text = text.replace(r"\{", "{").replace(r"\}", "}").replace(r"\|", "|")
    text = _COMMAND.sub(lambda m: SYMBOLS.get(m.group(0), m.group(0)[1:]), text)
    text = _DOUBLE_SUBSCRIPT.sub(r"\1[\2,\3]", text)
    return "\n".join(line.strip() for line in text.splitlines())


def to_text(markdown: str) -> str:
    """Markdown with LaTeX math as plain text for a terminal.

    Display math (``$$...$$``) becomes indented lines, inline math loses its ``$``, code
    spans their backticks, and headings are underlined.
    """
    def display(match):
        lines = latex_to_text(match.group(1)).splitlines()
        return "\n\n" + "\n".join("    " + line.strip() for line in lines if line.strip()) + "\n\n"

    text = re.sub(r"\$\$(.+?)\$\$", display, markdown, flags=re.S)
    text = re.sub(r"\$([^$]+)\$", lambda m: latex_to_text(m.group(1)), text)
    text = text.replace("`", "")
    out = []
    for line in text.splitlines():
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        if heading:
            title = heading.group(2).strip()
            out += [title, ("=" if len(heading.group(1)) <= 2 else "-") * len(title)]
        else:
            out.append(line.rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def to_latex(markdown: str) -> str:
    """Markdown with LaTeX math as a LaTeX fragment (sections, ``\\[...\\]``, ``\\texttt``)."""
    text = re.sub(r"\$\$(.+?)\$\$", lambda m: "\\[" + m.group(1).strip() + "\\]", markdown, flags=re.S)
    out = []
    for line in text.splitlines():
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        body = heading.group(2) if heading else line
        body = re.sub(r"`([^`]*)`", lambda m: "\\texttt{" + m.group(1).replace("_", "\\_") + "}", body)
        if heading:
            level = len(heading.group(1))
            command = "section" if level <= 2 else "subsection" if level == 3 else "paragraph"
            body = f"\\{command}*{{{body}}}"
        out.append(body)
    return "\n".join(out).strip() + "\n"
