"""Sphinx extension: read glocal's docstrings as the plain text they are written in.

The docstrings follow numpydoc but write formulas in ASCII (``X W_ U_^T``,
``|{j in C_i+ : f_j >= f_c}|``), where reStructuredText would see references (a word
ending in ``_``) and substitutions (text between ``|``). Outside inline literals and
interpreted text, those characters are escaped. Methods without a docstring do not inherit
the base class's (pymanopt's are written for another documentation build), and
scikit-learn's generated ``set_*_request`` methods are left out.
"""

import re

# Inline literals and interpreted text (``...``, `...`), kept as they are.
_LITERAL = re.compile(r"(``.+?``|`[^`]+`)")
# A word ending in "_" followed by what ends inline markup in reStructuredText.
_REFERENCE = re.compile(r"(?<=\w)_(?=[\s\-.,:;!?\\/'\")\]}>]|$)")


def _escape(text):
    parts = _LITERAL.split(text)
    for i in range(0, len(parts), 2):  # even parts lie outside literals
        parts[i] = _REFERENCE.sub(r"\\_", parts[i].replace("|", r"\|"))
    return "".join(parts)


def _process(app, what, name, obj, options, lines):
    block = None  # indentation of the directive or "::" whose (literal) body this is
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if block is not None and stripped and indent <= block:
            block = None
        if block is not None or not stripped or stripped.startswith(":"):
            continue
        if stripped.startswith(".. ") or stripped.endswith("::"):
            block = indent
            continue
        lines[i] = _escape(line)


def _skip(app, what, name, obj, skip, options):
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _process, priority=600)  # after numpydoc
    app.connect("autodoc-skip-member", _skip)
    app.config.autodoc_inherit_docstrings = False
    return {"parallel_read_safe": True}
