"""The documentation builds with warnings as errors, documents exactly the public names, its
study pages are those its benchmarks' outputs give, and its pages show their figures in a
real browser (headless Chromium).

The build runs every example and tutorial (the real-data ones read $GLOCAL_DATA), so these
tests take a minute or two (marked slow). They need the docs extra and Chromium, and skip
naming the one missing.
"""

import html as html_module
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from realdata import DATA_DIR, real

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
IN_CI = os.environ.get("CI", "").lower() == "true"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _require(module):
    if IN_CI:  # CI installs the docs extra: a missing package is a failure there
        __import__(module)
    return pytest.importorskip(module, reason=f"{module} is not installed: the documentation "
                                              "tests need the docs extra, pip install -e "
                                              "'.[docs]'")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built from a copy of docs/ and examples/ (the checkout stays clean)."""
    for module in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme"):
        _require(module)
    for dataset in ("image", "enron"):  # the real-data examples
        real(dataset)
    root = tmp_path_factory.mktemp("docs")
    ignore = shutil.ignore_patterns("_build", "auto_examples", "generated", "api.rst",
                                    "__pycache__")
    shutil.copytree(REPO / "docs", root / "docs", ignore=ignore)
    shutil.copytree(REPO / "examples", root / "examples", ignore=ignore)
    env = {**os.environ, "PYTHONPATH": str(REPO), "GLOCAL_DATA": str(DATA_DIR),
           "MPLBACKEND": "Agg"}
    html = root / "html"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(root / "docs"), str(html)], env=env, capture_output=True, text=True,
        timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-5000:]
    return html


def _api_pages():
    sys.path.insert(0, str(REPO / "docs"))
    try:
        import api_pages
    finally:
        sys.path.remove(str(REPO / "docs"))
    return api_pages


def test_every_public_name_has_a_page_and_nothing_else(site):
    api_pages = _api_pages()
    documented = set()
    for module in api_pages.MODULES:
        names = api_pages.public_names(module)
        assert names, module
        assert all(not name.startswith("_") for name in names), module
        for name in names:
            assert (site / "generated" / f"{module}.{name}.html").is_file(), (module, name)
            documented.add(f"{module}.{name}.html")
    # No page for an internal helper: the API pages are the names in __all__ (the
    # classes' own pages may add pages of their methods and attributes).
    pages = {page.name for page in (site / "generated").glob("*.html")}
    extra = {page for page in pages - documented
             if not any(page.startswith(name[:-len(".html")] + ".") for name in documented)}
    assert not extra, sorted(extra)
    # A class page lists the methods its class inherits from glocal's own classes.
    for page, methods in [("glocal.GLOCAL", ("fit", "decision_function", "predict",
                                             "predict_top_k", "score", "predict_proba")),
                          ("glocal.GLOCALCV", ("fit", "predict", "predict_top_k", "score")),
                          ("glocal.baselines.BR", ("fit", "predict", "score"))]:
        text = (site / "generated" / f"{page}.html").read_text()
        for method in methods:
            assert f'id="{page}.{method}"' in text, (page, method)
    # The equations, drawn at build time (matplotlib's mathtext): the site works offline.
    model = (site / "model.html").read_text()
    equations = re.findall(r'<img src="([^"]*mathmpl/[^"]+\.png)"', model)
    assert len(equations) >= 8
    assert all((site / source).is_file() for source in equations)
    # The tutorials' math is drawn too, not left as plain text.
    for tutorial in ("plot_2_unit_rows", "plot_5_your_own_block"):
        page = site / "auto_examples" / "tutorials" / f"{tutorial}.html"
        assert re.search(r'<img src="[^"]*mathmpl/[^"]+\.png"', page.read_text()), tutorial


def test_study_pages_are_those_their_benchmark_outputs_give(tmp_path):
    # One command writes the study pages from the benchmarks' output files: the pages in
    # the repository are its output, not edited by hand.
    pytest.importorskip("matplotlib")
    result = subprocess.run([sys.executable, str(REPO / "docs" / "make_studies.py"),
                             "--out", str(tmp_path)], capture_output=True, text=True,
                            timeout=300, env={**os.environ, "MPLBACKEND": "Agg"}, check=False)
    assert result.returncode == 0, result.stderr
    pages = sorted(p.name for p in (REPO / "docs" / "studies").glob("*.rst"))
    assert pages == sorted(p.name for p in tmp_path.glob("*.rst"))
    for page in pages:
        assert (tmp_path / page).read_text() == (REPO / "docs" / "studies" / page).read_text(), page
    images = sorted(p.name for p in (tmp_path / "images").glob("*.png"))
    assert images and images == sorted(
        p.name for p in (REPO / "docs" / "studies" / "images").glob("*.png"))


def test_gallery_pages_have_their_figures(site):
    examples = sorted((REPO / "examples").glob("*.py"))
    tutorials = sorted((REPO / "examples" / "tutorials").glob("*.py"))
    assert len(tutorials) >= 5
    for script, folder in [(s, "") for s in examples] + [(s, "tutorials/") for s in tutorials]:
        page = site / "auto_examples" / f"{folder}{script.stem}.html"
        images = _figure_images(page)
        assert images, f"{page.name} shows no figure"
        for image in images:
            pixels = _read_png(image)
            assert pixels.shape[0] > 100 and pixels.std() > 0.01, image


def _prose(script):
    """The text of every ``# %%`` block of a script (that line's own text too), one string
    per block, whitespace collapsed."""
    blocks, block = [], None
    for line in script.read_text().splitlines():
        if line.lstrip().startswith("# %%"):
            block = [line.lstrip()[4:]]
            blocks.append(block)
        elif block is not None and line.startswith("#"):
            block.append(line[1:])
        else:
            block = None
    return [text for text in (" ".join(" ".join(b).split()) for b in blocks) if text]


def _page_prose(page):
    """A built page's text outside its code blocks, as `_prose` writes it."""
    html = re.sub(r'<div class="highlight[^"]*">.*?</div>', " ", page.read_text(),
                  flags=re.DOTALL)
    text = html_module.unescape(re.sub(r"<[^>]+>", "", html))
    text = text.translate(str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"',
                                         "\u201d": '"', "\u00b6": " "}))
    return " ".join(text.split())


def test_gallery_pages_show_every_sentence_of_their_scripts(site):
    # Text on a "# %%" line itself, or a "# %%" inside code, is not the gallery's prose:
    # each block's sentences must be on the page, outside the code.
    for script in sorted((REPO / "examples").glob("*.py")):
        page = _page_prose(site / "auto_examples" / f"{script.stem}.html")
        for block in _prose(script):
            plain = block.replace("``", "").replace("`", "").replace("**", "")
            assert plain in page, (script.name, block)


def _figure_images(page):
    """The figure files a gallery page shows (sphinx-gallery names them sphx_glr_*)."""
    sources = re.findall(r'<img[^>]+src="([^"]*sphx_glr_[^"]+\.png)"', page.read_text())
    return [(page.parent / source).resolve() for source in sources
            if "thumb" not in source]


def _read_png(path):
    from matplotlib.image import imread

    return np.asarray(imread(path), dtype=float)[..., :3]


def _browser():
    for name in BROWSERS:
        if shutil.which(name):
            return shutil.which(name)
    if IN_CI:
        pytest.fail("no headless browser: CI installs chromium")
    pytest.skip("chromium is not installed: the documentation tests open the built site in "
                "it (apt-get install chromium)")


def _chromium(*args):
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
             "--hide-scrollbars", "--virtual-time-budget=10000", *args],
            capture_output=True, text=True, timeout=180, check=False)


IMAGE_PROBE = """<script>
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const drawn = images.filter(image => image.complete && image.naturalWidth > 0);
  document.body.setAttribute("data-images", drawn.length + "/" + images.length);
});
</script>"""


@pytest.mark.parametrize("page, n_images", [
    ("index.html", 0),
    ("auto_examples/index.html", 12),  # a thumbnail per example and tutorial
    ("auto_examples/plot_quick_start.html", 2),
    ("auto_examples/tutorials/plot_2_unit_rows.html", 5),  # its figure and its equations
    ("missing_labels.html", 3),  # the equations
    ("studies/missing_labels.html", 1)])
def test_pages_render_in_a_browser(site, page, n_images, tmp_path):
    # One start of the browser: the page's DOM once loaded, where the probe (a script that
    # draws nothing) says how many of the page's images it loaded and decoded, and a
    # screenshot of it.
    path = site / page
    probe = path.with_name(f"probe-{path.name}")
    probe.write_text(path.read_text().replace("</body>", IMAGE_PROBE + "</body>"))
    screenshot = tmp_path / "page.png"
    dom = _chromium("--dump-dom", f"--screenshot={screenshot}", "--window-size=1280,1600",
                    probe.as_uri()).stdout
    counts = dom.split('data-images="', 1)[1].split('"', 1)[0]
    drawn, total = map(int, counts.split("/"))
    assert total >= n_images and drawn == total, counts

    pixels = _read_png(screenshot)
    assert pixels.shape[:2] == (1600, 1280)
    not_white = (pixels < 0.9).any(axis=-1).mean()
    assert not_white > 0.03, not_white  # not blank
    if n_images:
        colored = (np.ptp(pixels, axis=-1) > 0.2).mean()  # figures: more than black on white
        assert colored > 0.002, colored
