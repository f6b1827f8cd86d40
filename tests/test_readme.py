"""The README's table of when to use GLOCALCV() holds the numbers the study pages measured."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
STUDIES = REPO / "docs" / "studies"
PAPER_8 = ["Arts", "Business", "Computers", "Education", "Entertainment", "Health", "Enron",
           "Image"]
# The README's rows: the cells of the performance study's recommended benchmark they read.
ROWS = {"few labels, few rows": ["arts", "enron"],
        "many labels": ["rcv1subset1", "bibtex", "delicious", "synthetic:5000,500,374"],
        "few labels, many rows": ["synthetic:20000,500,22", "synthetic:50000,1000,50"]}


def _number(text):
    return float(text.replace("−", "-").replace(",", ""))


def _readme_rows():
    """{row name: {rho: cell text}} of the README's table of regimes."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## When to use `GLOCALCV()`")[1].split("\n## ")[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        name = next((row for row in ROWS if cells[0].startswith(row + ":")), None)
        if name:
            rows[name] = {0.3: cells[1], 1.0: cells[2]}
    assert list(rows) == list(ROWS), rows
    return rows


def _recommended_cells():
    """{(dataset, rho): (search CPU over BR's, Ap minus BR's)} from the performance page."""
    page = (STUDIES / "performance.rst").read_text(encoding="utf-8")
    block = page.split("**The recommended estimator against tuned BR")[1].split("\n**")[0]
    cells = {}
    for line in block.splitlines():
        t = line.split()
        if len(t) == 14 and t[1] in ("0.3", "1.0"):
            cells[t[0], float(t[1])] = (float(t[5]), float(t[-3]) - float(t[-2]))
    return cells


def _missing_label_gains():
    """{rho: [Ap minus BR's on each of the paper's 8]} from the missing-labels page."""
    page = (STUDIES / "missing_labels.rst").read_text(encoding="utf-8")
    table = page.split("Test Ap of GLOCALCV() / BR")[1].split("The grid {2, 4, 16}")[0]
    gains = {0.3: [], 0.7: [], 1.0: []}
    for dataset in PAPER_8:
        cells = table.split(f"* - {dataset}\n")[1].split("\n   * -")[0].splitlines()[:3]
        for rho, cell in zip(gains, cells):
            gains[rho].append(_number(re.search(r"\(([−+]\d\.\d+)", cell).group(1)))
    return gains


def _close(printed, value):
    """Whether ``value`` rounds to ``printed`` (a number as written, to its own digits)."""
    digits = len(printed.split(".")[1]) if "." in printed else 0
    return abs(_number(printed) - value) <= 0.5 * 10 ** -digits + 1e-12


def _assert_range(cell, label, values):
    found = re.search(label + r" ([−+]?[\d.,]+)(?:(?: to |–)([−+]?[\d.,]+))?", cell)
    assert found, (label, cell)
    low, high = found.group(1), found.group(2) or found.group(1)
    assert _close(low, min(values)) and _close(high, max(values)), (cell, values)


@pytest.mark.parametrize("rho", [0.3, 1.0])
@pytest.mark.parametrize("row", list(ROWS))
def test_readme_cpu_ratios_and_gains_are_the_measured_ones(row, rho):
    cell = _readme_rows()[row][rho]
    measured = [value for (dataset, r), value in _recommended_cells().items()
                if dataset in ROWS[row] and r == rho]
    assert measured, (row, rho)
    _assert_range(cell, "CPU", [ratio for ratio, _ in measured])
    if row == "few labels, few rows":  # Ap from the 10 splits of the missing-labels study
        gains = _missing_label_gains()[rho]
        _assert_range(cell, "Ap", gains)
        at_least = sum(gain >= 0 for gain in gains)
        assert f"at least BR's on {at_least} of {len(PAPER_8)}" in cell
    else:
        _assert_range(cell, "Ap", [gain for _, gain in measured])


def _low_rho_gains(rho):
    """[Ap minus BR's on each Yahoo set] at ``rho`` from the missing-labels page's section on
    90 and 95 % missing."""
    page = (STUDIES / "missing_labels.rst").read_text(encoding="utf-8")
    table = page.split("90 and 95 % of the labels missing")[1].split("The same search scored")[0]
    column = {0.1: 0, 0.05: 1}[rho]
    gains = []
    for dataset in PAPER_8[:6]:
        cells = table.split(f"* - {dataset}\n")[1].split("\n   * -")[0].splitlines()[:2]
        gains.append(_number(re.search(r"\(([−+]\d\.\d+)", cells[column]).group(1)))
    return gains


def test_readme_ninety_percent_missing_is_the_measured_one():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## When to use `GLOCALCV()`")[1].split("\n## ")[0]
    for start, rho in [("With 90 % of the labels missing", 0.1), ("With 95 % missing", 0.05)]:
        sentence = " ".join(re.split(r"\.\s", section.split(start)[1])[0].split())
        gains = _low_rho_gains(rho)
        _assert_range(sentence, "Ap", gains)
        assert f"at least BR's on {sum(gain >= 0 for gain in gains)} of {len(gains)}" in sentence


def test_readme_links_the_pages_its_numbers_come_from():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## When to use `GLOCALCV()`")[1].split("\n## ")[0]
    for page in ["docs/studies/missing_labels.rst", "docs/studies/performance.rst",
                 "docs/studies.rst"]:
        assert f"]({page})" in section and (REPO / page).is_file(), page
