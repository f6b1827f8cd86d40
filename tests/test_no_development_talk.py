"""User-facing text never speaks of how the project is developed.

The README, the documentation, the package (docstrings, comments, command-line help), the
examples and the benchmarks are read by users: no issue numbers, work sessions, paths of
the development setup, CI internals or remarks about the computer something ran on, and
the package cites the paper and the documentation, not sections of the README.
"""

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SUFFIXES = (".py", ".md", ".rst", ".txt")

PATTERNS = {
    "an issue number": r"\bissues?[ -]?#?\d+",
    "a work session": r"\bsessions?\b",
    "a path of the development setup": r"\.\./shared|\bshared/(paper|data)\b",
    "CI internals": r"\.ci/run",
    "the computer something ran on": (r"\bthis (\d+-core )?machine\b|\b\d+-core machine\b"
                                      r"|\bidle machine\b"),
    "the project's goals": r"\bgoals?\b",
    "what the developers adopted": r"\badopted\b",
}
# Inside the package: the README is not a reference to cite.
PACKAGE_PATTERNS = {"a README citation": r"\bREADME\b"}


def _tracked_files():
    try:
        listed = subprocess.run(
            ["git", "ls-files", "README.md", "docs", "glocal", "examples", "benchmarks"],
            cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [REPO / name for name in listed if name.endswith(SUFFIXES)]


def _hits(path, patterns):
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in patterns.items():
            if re.search(pattern, line, flags=re.IGNORECASE):
                yield f"{path.relative_to(REPO)}:{number}: {what}: {line.strip()[:120]}"


def test_user_facing_text_has_no_development_talk():
    hits = []
    for path in _tracked_files():
        patterns = dict(PATTERNS)
        if path.relative_to(REPO).parts[0] == "glocal":
            patterns.update(PACKAGE_PATTERNS)
        hits += _hits(path, patterns)
    assert not hits, "\n".join(hits)


@pytest.mark.parametrize("line, found", [
    ("the target of issue 13 item 4", True),
    ("(Issue-7)", True),
    ("ran in three sessions", True),
    ("GLOCAL_DATA=../shared/data python x.py", True),
    ("see shared/paper/NOTES.md", True),
    ("`.ci/run` sets it", True),
    ("on this 2-core machine", True),
    ("on this machine", True),
    ("the 2-core machine was loaded", True),
    ("measured on the idle machine", True),
    ("above the goal of at most 3 times", True),
    ("the goal is met on Enron", True),
    ("Not adopted: the search would", True),
    ("the issue of scale", False),
    ("n_shared_clusters=2", False),
    ("a shared machine", False),
])
def test_the_patterns_find_what_they_mean(line, found):
    hits = [what for what, pattern in PATTERNS.items()
            if re.search(pattern, line, flags=re.IGNORECASE)]
    assert bool(hits) == found, hits
