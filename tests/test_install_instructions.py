"""The README's and the install page's instructions match the project: their test commands
give what the tests need, and their tables of extras list what each installs."""

import configparser
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
INSTALL = (REPO / "docs" / "install.rst").read_text()


def _extras():
    """Every extra of setup.cfg with its requirements' names (no versions, no markers)."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    extras = {}
    for extra, text in config["options.extras_require"].items():
        lines = [line.split(";")[0].strip() for line in text.splitlines()]
        extras[extra] = [re.split(r"[<>=!~ ]", line)[0] for line in lines
                         if line and not line.startswith("#")]
    return extras


def test_the_extras_table_lists_every_requirement():
    readme = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", README, re.MULTILINE)
    install = re.findall(r"^   \* - ``(\w+)``\n     - (.+)$", INSTALL, re.MULTILINE)
    for table in (readme, install):
        rows = dict(table)
        assert "test" in rows
        for extra, names in _extras().items():
            if extra in rows:
                listed = {name.split()[0] for name in rows[extra].split(",")}  # no versions
                assert set(names) <= listed, (extra, set(names) - listed)


def test_the_test_commands_say_where_the_data_is():
    """Without GLOCAL_DATA every real-data and documentation test skips: the README's test
    commands set it, and say what else the documentation tests need."""
    commands = [line for line in (README + INSTALL).splitlines()
                if "pytest" in line and "pip" in line]
    assert len(commands) >= 3
    for command in commands:
        assert "GLOCAL_DATA=" in command.split("pytest")[0], command
    tests = README.split("## Tests", 1)[1]
    assert "Chromium" in tests and "`GLOCAL_DATA`" in tests
