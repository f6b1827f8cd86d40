"""A sphinx-gallery image scraper for scripts that save their figures to files.

The examples are plain scripts: they save figures with `glocal.plotting.save_figure` to
``$GLOCAL_EXAMPLES_OUT`` and never call ``plt.show``, so sphinx-gallery's pyplot scraper
would find nothing. This one takes the PNG files a code block wrote or rewrote there.
(In its own module: Sphinx pickles the configuration, and a class defined in conf.py
cannot be pickled.)
"""

import shutil
from pathlib import Path


class SavedFigures:
    """Scraper: the PNG files of ``folder`` created or changed since the last block."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.seen = {}

    def __repr__(self):  # sphinx-gallery compares configurations by repr
        return "SavedFigures()"

    def __call__(self, block, block_vars, gallery_conf):
        from sphinx_gallery.scrapers import figure_rst

        changed = []
        for path in sorted(self.folder.glob("*.png"), key=lambda p: p.stat().st_mtime_ns):
            stamp = path.stat().st_mtime_ns
            if self.seen.get(path.name) != stamp:
                self.seen[path.name] = stamp
                changed.append(path)
        targets = []
        for path, target in zip(changed, block_vars["image_path_iterator"]):
            shutil.copyfile(path, target)
            targets.append(target)
        return figure_rst(targets, gallery_conf["src_dir"])
