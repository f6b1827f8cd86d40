"""Progress bars: the time left they show against the time that was left.

Runs ``glocal fit FILE --model ...`` (more options in ``--fit-args``, e.g.
``--fit-args=--paper``) in this
process with standard error replaced by a terminal that records when each bar was drawn,
and prints, for every bar, the time left it showed when it first reached 10 %, 25 %, 50 %
and 75 % against the true time left (until the bar's last drawing), and the worst ratio
between the two from 10 % on, each side plus one second (the bar shows whole seconds).
``?`` is a bar that showed no estimate; ``-`` one that never reached that fraction.
Wall-clock seconds, as the bars show them.

    GLOCAL_DATA=/path/to/data python benchmarks/bench_progress.py \\
        $GLOCAL_DATA/scene/scene-train.arff $GLOCAL_DATA/enron/enron.arff --out progress.txt
"""

import argparse
import contextlib
import re
import sys
import tempfile
import time
from pathlib import Path

from glocal.cli import main as glocal_main

FRACTIONS = (10, 25, 50, 75)
# "GLOCALCV search:  25%|###   | 6/24 [00:10<00:30, ...]" (tqdm's time left) or
# "... [00:10, 00:30 left]"; the time left may be "?" or absent
DRAWING = re.compile(r"(?P<desc>[^\r\n:]+):\s+(?P<percent>\d+)%\|.*?\[(?P<elapsed>[\d:]+)"
                     r"(?:(?:<|, )(?P<left>[\d:]+|\?))?"
                     # or a bar of elapsed time only: "GLOCALCV refit [00:10, ...]"
                     r"|(?P<timer>[^\r\n:\[]+?) \[[\d:]+[,\]]")


class RecordingTerminal:
    """A stream that says it is a terminal and keeps every drawing with its time."""

    def __init__(self):
        self.drawings = []

    def isatty(self):
        return True

    def write(self, text):
        now = time.perf_counter()
        matches = list(DRAWING.finditer(text))
        for match in matches:
            if match["timer"] is not None:  # no fraction, no time left
                self.drawings.append((now, match["timer"].strip(), None, None))
                continue
            left = match["left"]
            self.drawings.append((now, match["desc"].strip(), int(match["percent"]),
                                  None if left in (None, "?") else _seconds(left)))
        if not matches and "\r" in text and not text.strip():
            self.drawings.append((now, None, None, None))  # a closed bar clears its line
        return len(text)

    def flush(self):
        pass


def _seconds(text):
    seconds = 0
    for part in text.split(":"):
        seconds = 60 * seconds + int(part)
    return seconds


def _clock(seconds):
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


def bars(drawings):
    """{bar: ([(time, percent, shown time left or None)], end)}, in drawing order; a bar
    ends when its line is cleared (or at its last drawing)."""
    result, last = {}, None
    for now, desc, percent, left in drawings:
        if desc is None:
            if last is not None and result[last][1] is None:
                result[last][1] = now
        else:
            result.setdefault(desc, [[], None])[0].append((now, percent, left))
            last = desc
    return {desc: (events, events[-1][0] if end is None else end)
            for desc, (events, end) in result.items()}


def report(name, drawings):
    """One line per bar: shown/true time left at each fraction and the worst ratio."""
    lines = []
    for desc, (events, end) in bars(drawings).items():
        cells, ratios = [], []
        if events[0][1] is None:
            lines.append(f"{name} | {desc} | {_clock(end - events[0][0])} | "
                         + " | ".join(["elapsed only"] * len(FRACTIONS)) + " | no estimate")
            continue
        for now, percent, left in events:
            if percent >= FRACTIONS[0] and left is not None:
                truth = end - now
                ratios.append(max((left + 1) / (truth + 1), (truth + 1) / (left + 1)))
        for fraction in FRACTIONS:
            first = next(((now, left) for now, percent, left in events if percent >= fraction),
                         None)
            if first is None:
                cells.append("-")
            else:
                shown = "?" if first[1] is None else _clock(first[1])
                cells.append(f"{shown}/{_clock(end - first[0])}")
        worst = f"{max(ratios):.1f}x" if ratios else "no estimate"
        lines.append(f"{name} | {desc} | {_clock(end - events[0][0])} | "
                     f"{' | '.join(cells)} | {worst}")
    return lines


def measure(path, options):
    """The drawings of the bars of ``glocal fit path --model ... options``."""
    terminal = RecordingTerminal()
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stderr(terminal):
        code = glocal_main(["fit", str(path), "--model", str(Path(folder) / "model.skops"),
                            *options])
    if code:
        raise SystemExit(f"glocal fit {path} failed with code {code}")
    return terminal.drawings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="+", help="data files for glocal fit")
    parser.add_argument("--out", help="text file the table is appended to")
    parser.add_argument("--fit-args", default="",
                        help="more options of glocal fit, e.g. --fit-args=--paper")
    args = parser.parse_args(argv)
    options = args.fit_args.split()
    header = ("data | bar | length | time left shown/true at " + " | ".join(
        f"{fraction} %" for fraction in FRACTIONS) + " | worst ratio from 10 %")
    print(header, flush=True)
    for path in args.data:
        name = " ".join([Path(path).name, *options])
        lines = report(name, measure(path, options))
        print("\n".join(lines), flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as file:
                if file.tell() == 0:
                    file.write(header + "\n")
                file.write("\n".join(lines) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
