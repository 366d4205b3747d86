"""The built documentation site in a real browser (headless Chromium): the front page and an
API page render (not blank, the theme's stylesheet applied), and the search page finds a
function through the search index.  Screenshots go to docs/_build/screenshots/.

Run with ``python -m pytest -m docs tests/test_docs_browser.py`` after building the site
(``python -m sphinx -W -b html docs docs/_build/html``; the test builds it when it is missing).
Needs Chromium: on Debian and Ubuntu ``apt-get install chromium``; ``NX_RUNE_CHROMIUM`` names
another binary.  .ci/run runs it when Chromium is installed.
"""
import functools
import http.server
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

pytestmark = pytest.mark.docs

ROOT = pathlib.Path(__file__).resolve().parent.parent
HTML = ROOT / "docs" / "_build" / "html"
SHOTS = ROOT / "docs" / "_build" / "screenshots"
API_PAGE = "reference/generated/nx_rune.grad.html"
STYLESHEET = re.compile(r'<link\b[^>]*\brel="stylesheet"[^>]*>')


def chromium():
    for name in (os.environ.get("NX_RUNE_CHROMIUM"), "chromium", "chromium-browser",
                 "google-chrome", "google-chrome-stable"):
        if name and shutil.which(name):
            return shutil.which(name)
    pytest.fail("no Chromium found: apt-get install chromium (or set NX_RUNE_CHROMIUM)")


@pytest.fixture(scope="module")
def site():
    """The built site served over HTTP on localhost (as a reader's browser would load it)."""
    if not (HTML / "index.html").exists():
        subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "docs",
                        str(HTML)], cwd=ROOT, check=True)
    handler = functools.partial(QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    requests = []

    def log_message(self, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        QuietHandler.requests.append((code, self.path))
        super().send_error(code, message, explain)


def browse(*args, timeout=120):
    base = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--disable-dev-shm-usage", "--no-first-run", "--virtual-time-budget=15000"]
    proc = subprocess.run(base + list(args), capture_output=True, text=True, timeout=timeout)
    return proc


def screenshot(url, name, width=1280, height=900):
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    path.unlink(missing_ok=True)
    browse(f"--screenshot={path}", f"--window-size={width},{height}", url)
    assert path.exists() and path.stat().st_size > 0, f"no screenshot of {url}"
    import matplotlib.image

    return matplotlib.image.imread(str(path))[..., :3]


def dom(url):
    proc = browse("--dump-dom", url)
    assert proc.stdout.strip(), f"no DOM for {url}: {proc.stderr[-500:]}"
    return proc.stdout


def check_rendered(image, what):
    """Not a blank page: enough pixels away from the background, in more than one colour."""
    background = np.median(image.reshape(-1, 3), axis=0)
    far = np.abs(image - background).sum(axis=-1) > 0.1
    assert far.mean() > 0.01, f"{what}: the page is blank ({far.mean():.4f} of it drawn)"
    colours = np.unique((image * 15).round().reshape(-1, 3), axis=0)
    assert len(colours) > 8, f"{what}: only {len(colours)} colours"


def unstyled_copy(page):
    """A copy of page beside it, its stylesheet links removed."""
    text = (HTML / page).read_text()
    stripped = STYLESHEET.sub("", text)
    assert stripped != text, f"{page} links no stylesheet"
    copy = (HTML / page).with_name("_unstyled_" + (HTML / page).name)
    copy.write_text(stripped)
    return copy.relative_to(HTML).as_posix()


@pytest.mark.parametrize("page", ["index.html", API_PAGE])
def test_page_renders_with_its_stylesheet(site, page):
    name = page.rsplit("/", 1)[-1].removesuffix(".html")
    QuietHandler.requests.clear()
    image = screenshot(f"{site}/{page}", name)
    check_rendered(image, page)
    # every stylesheet the page links exists and was served
    links = STYLESHEET.findall((HTML / page).read_text())
    assert any("pydata-sphinx-theme.css" in link for link in links), links
    for link in links:
        href = re.search(r'href="([^"?]+)', link).group(1)
        assert (HTML / page).parent.joinpath(href).resolve().is_file(), f"{page}: missing {href}"
    assert not [r for r in QuietHandler.requests if r[1].endswith(".css")], QuietHandler.requests
    # and it is applied: the page looks different without it
    copy = unstyled_copy(page)
    try:
        bare = screenshot(f"{site}/{copy}", name + "_unstyled")
    finally:
        (HTML / copy).unlink()
    differs = (np.abs(image - bare).sum(axis=-1) > 0.1).mean()
    assert differs > 0.05, f"{page}: the stylesheet changes only {differs:.3f} of the page"


def test_index_page_content(site):
    text = dom(f"{site}/index.html")
    assert "NumPy-like arrays with composable automatic differentiation" in text
    for link in ("guide/index.html", "reference/index.html", "auto_examples/index.html"):
        assert link in text, link


def test_api_page_content(site):
    text = dom(f"{site}/{API_PAGE}")
    assert 'id="nx_rune.grad"' in text
    assert "argnums" in text and "Examples" in text


def test_search_finds_a_function(site):
    index = (HTML / "searchindex.js").read_text()
    assert index.startswith("Search.setIndex(") and "nx_rune.grad" in index, \
        "the search index lacks nx_rune.grad"
    screenshot(f"{site}/search.html?q=value_and_grad", "search")
    text = dom(f"{site}/search.html?q=value_and_grad")
    results = re.findall(r'<ul\b[^>]*\bclass="search"[^>]*>(.*?)</ul>', text, re.S)
    assert results, "the search page shows no result list (is searchindex.js loaded?)"
    assert "nx_rune.value_and_grad" in results[0], results[0][:500]
