"""Sphinx configuration of the glocal documentation.

Build with warnings as errors (from the project root)::

    pip install -e ".[docs]"
    python docs/make_studies.py          # the study pages, from the benchmarks' outputs
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The gallery runs every script of ``examples/`` (and ``examples/tutorials/``); the scripts
save their figures with `glocal.plotting.save_figure` to ``$GLOCAL_EXAMPLES_OUT`` (a temporary
folder here), from where `gallery_figures.SavedFigures` puts them on the pages. The real-data
examples read the data directory ``$GLOCAL_DATA``.
"""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))

import glocal  # noqa: E402
from glocal.manifolds import RealEuclidean, UnitRows  # noqa: E402
from sklearn.base import BaseEstimator, MetaEstimatorMixin, MultiOutputMixin  # noqa: E402
from api_pages import write_api_page  # noqa: E402
from gallery_figures import SavedFigures  # noqa: E402

os.environ.setdefault("MPLBACKEND", "Agg")
FIGURES = Path(tempfile.mkdtemp(prefix="glocal-gallery-"))
atexit.register(shutil.rmtree, FIGURES, ignore_errors=True)
os.environ["GLOCAL_EXAMPLES_OUT"] = str(FIGURES)

project = "glocal"
author = "the glocal developers"
copyright = "2026, the glocal developers"
release = version = glocal.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "matplotlib.sphinxext.mathmpl",  # math drawn at build time: the site works offline
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "plain_docstrings",
]
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/**/*.ipynb", "auto_examples/**/*.py", "reproduction",
                    "missing-labels", "studies/data"]
templates_path = []
html_theme = "pydata_sphinx_theme"
html_title = f"glocal {release}"
html_static_path = []
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_sidebars = {page: [] for page in ("index", "install")}  # no subsections

mathmpl_fontsize = 13.0
mathmpl_srcset = ["2x"]
autosummary_generate = True
autodoc_inherit_docstrings = False  # pymanopt's method docstrings are not ours
# The optional extras' packages: the API pages document glocal.solver.dask_backend without dask.
autodoc_mock_imports = ["dask", "distributed", "dask_ml"]
# A class page lists the methods it inherits from glocal's own classes (predict, score,
# predict_top_k of every estimator), not those of scikit-learn's or pymanopt's classes.
FOREIGN_BASES = sorted({base.__name__ for cls in (BaseEstimator, MetaEstimatorMixin,
                                                  MultiOutputMixin, RealEuclidean, UnitRows)
                        for base in cls.__mro__
                        if not base.__module__.startswith("glocal")} - {"object"})
autodoc_default_options = {"members": True, "inherited-members": ", ".join(FOREIGN_BASES)}
numpydoc_show_class_members = False  # the class pages list members through autodoc
numpydoc_class_members_toctree = False
intersphinx_mapping = {}  # offline builds: no inventories fetched


sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",  # run every script: the gallery shows real output
    "image_scrapers": (SavedFigures(FIGURES),),
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "write_computation_times": False,  # that page loads scripts from CDNs
    "capture_repr": (),  # the scripts end blocks with save_figure(...): no "Out: PosixPath"
    "plot_gallery": "True",
}

write_api_page(DOCS / "api.rst")
