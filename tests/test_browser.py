"""The built book in a real browser: headless Chromium (Debian's package) driven by Playwright (PyPI).

Every page is served from 127.0.0.1 and opened: no console error, every chart drawn by vega-embed as an
SVG with marks, no request to any other host (each one is recorded and aborted, so nothing leaves the
machine); the sidebar navigates, the search page finds a known word, the explorable figure's slider
changes its marks. At a desktop (1,440 px) and a phone (390 px) viewport width, on every page: no
sideways scroll; on every chart no two texts overlap (tick labels, titles, text marks), none reaches out
of the chart or is cut short, no chart is wider than its container, and each has its CSV link below it;
no table cell, caption or chart text is a Python literal (None, True, a quoted string, a [list]); no
number is in exponent form (2.0261e+07) and no year is written as a count (2,026). A capture of the
viewport (``<page>-<width>.png``, where layout is judged) and of the full page (``<page>-<width>-full.png``)
of every page at both widths goes to build/screenshots/ for review. A deliberately broken page, a
deliberately crowded chart and a page of machine output show the checker failing.

The site is the session's one build of the book (the ``built_book`` fixture of conftest.py, shared with
the build tests), or taken from JALAPENO_BROWSER_SITE (a folder a full
``jalapeno build --out`` wrote). Without Chromium or Playwright the tests are skipped, unless
JALAPENO_REQUIRE_BROWSER=1 (CI sets it).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from pathlib import Path

import pytest

from jalapeno import charts
from jalapeno.publish import pages, scenarios

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("JALAPENO_CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
SCREENSHOTS = ROOT / "build" / "screenshots"
#: The viewport widths every page is checked at (px): a desktop and a phone.
WIDTHS = {"desktop": 1440, "phone": 390}

#: In the page: each chart div, whether vega-embed replaced the static SVG, and how many marks it drew.
CHARTS_JS = """() => [...document.querySelectorAll('div.jalapeno-chart')].map(el => ({
    id: el.id,
    embedded: el.classList.contains('vega-embed'),
    marks: el.querySelectorAll('svg.marks g[class*="role-mark"] > path, svg.marks g[class*="role-mark"] > line,'
                               + ' svg.marks g[class*="role-mark"] > g').length,
}))"""
CHARTS_READY_JS = """() => [...document.querySelectorAll('div.jalapeno-chart')]
    .every(el => el.querySelector('svg.marks') !== null)"""
#: In the page: for each chart, its width and its container's, and every pair of visible tick labels of
#: one axis (or labels of one legend) whose boxes overlap by more than half a pixel both ways.
LAYOUT_JS = """() => [...document.querySelectorAll('div.jalapeno-chart')].map(el => {
    const svg = el.querySelector('svg.marks');
    const box = (svg || el).getBoundingClientRect();
    const parent = el.parentElement.getBoundingClientRect();
    const visible = t => t.textContent.trim() !== '' && getComputedStyle(t).opacity !== '0'
        && t.getAttribute('opacity') !== '0' && t.getBoundingClientRect().width > 0;
    const overlaps = [];
    const groups = [...el.querySelectorAll('g.role-axis'), ...el.querySelectorAll('g.role-legend')];
    for (const g of groups) {
        const kind = g.classList.contains('role-axis') ? 'axis' : 'legend';
        const sel = kind === 'axis' ? 'g.role-axis-label text' : 'g.role-legend-label text';
        const texts = [...g.querySelectorAll(sel)].filter(visible);
        const boxes = texts.map(t => t.getBoundingClientRect());
        for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
            const a = boxes[i], b = boxes[j];
            const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (w > 0.5 && h > 0.5) overlaps.push(kind + ' labels "' + texts[i].textContent + '" and "'
                                                   + texts[j].textContent + '"');
        }
    }
    return {id: el.id, width: box.width, right: box.right, container: parent.width,
            containerRight: parent.right, overlaps: overlaps};
})"""


#: In the page: what a reader would see as machine output or broken layout, at the viewport's width: the
#: page wider than the screen; a chart's text reaching out of its SVG or cut short by Vega (a label
#: ending in an ellipsis); two visible texts of one chart overlapping (tick labels, titles, text marks);
#: a table cell, caption, summary or chart text whose whole text is a Python literal (None, True, False,
#: nan, a quoted string, a [list]); a number in exponent form (2.0261e+07) or a year of the 2020s with a
#: thousands separator (2,026) anywhere in the text; a chart without its CSV link below it.
READING_JS = """() => {
    const problems = [];
    const doc = document.documentElement;
    if (doc.scrollWidth > window.innerWidth + 1)
        problems.push('page scrolls sideways: ' + doc.scrollWidth + ' px wide at ' + window.innerWidth + ' px');
    const literal = /^(None|True|False|nan|NaN|'[^']*'|"[^"]*"|\\[.*\\])$/;
    const shown = el => { const b = el.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
    for (const el of document.querySelectorAll('article td, article th, article caption, article figcaption,'
                                                 + ' article summary, article dd, div.jalapeno-chart text')) {
        const t = el.textContent.trim();
        if (literal.test(t)) problems.push('a Python literal as a whole ' + el.tagName.toLowerCase() + ': ' + t);
    }
    for (const el of document.querySelectorAll('div.jalapeno-chart')) {
        const svg = el.querySelector('svg.marks');
        if (!svg) continue;
        const frame = svg.getBoundingClientRect();
        const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() !== '' && shown(t)
            && getComputedStyle(t).opacity !== '0' && t.getAttribute('opacity') !== '0'
            && (t.getAttribute('fill-opacity') || '1') !== '0');
        const boxes = texts.map(t => t.getBoundingClientRect());
        texts.forEach((t, i) => {
            const b = boxes[i];
            if (b.left < frame.left - 1 || b.right > frame.right + 1 || b.top < frame.top - 1 || b.bottom > frame.bottom + 1)
                problems.push('chart ' + el.id + ': text "' + t.textContent + '" reaches out of the chart');
            if (t.textContent.trim().endsWith('\u2026'))
                problems.push('chart ' + el.id + ': text "' + t.textContent + '" is cut short');
        });
        for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
            const a = boxes[i], b = boxes[j];
            const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (w > 1 && h > 1) problems.push('chart ' + el.id + ': texts "' + texts[i].textContent + '" and "'
                                               + texts[j].textContent + '" overlap');
        }
        const holder = el.closest('div.output') || el.parentElement;
        const charts = holder.querySelectorAll('div.jalapeno-chart').length;
        const links = holder.querySelectorAll('p.jalapeno-chart-data a[href$=".csv"]').length;
        if (links < charts) problems.push('chart ' + el.id + ': no link to its CSV below it');
    }
    document.querySelectorAll('article details').forEach(d => d.open = true);  // folded text is read too
    const body = document.querySelector('article') ? document.querySelector('article').innerText : '';
    for (const m of body.matchAll(/[0-9]\\.[0-9]+e[+-][0-9]+[^\\n]{0,24}/g))
        problems.push('a number in exponent form: "' + m[0] + '"');
    for (const m of body.matchAll(/(^|[^0-9.,])(2,02[0-9])(?![0-9,])[^\\n]{0,16}/g))
        problems.push('a year of the 2020s with a thousands separator: "' + m[0].trim() + '"');
    return [...new Set(problems)];
}"""


def _browser_or_skip():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    missing = ("the playwright package is not installed" if sync_playwright is None
               else f"no Chromium at {CHROMIUM}" if not CHROMIUM.exists() else None)
    if missing:
        if os.environ.get("JALAPENO_REQUIRE_BROWSER") == "1":
            pytest.fail(f"JALAPENO_REQUIRE_BROWSER=1 but {missing} (apt-get install -y chromium; pip install -e '.[test]')")
        pytest.skip(missing)
    return sync_playwright


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


class Site:
    """A folder served on 127.0.0.1 (a free port) from a thread, for the length of a ``with`` block."""

    def __init__(self, folder: Path):
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Site":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def check_layout(page, path: str) -> list[str]:
    """The layout problems of the charts on an open page: two tick labels of one axis or two labels of
    one legend that overlap, a chart wider than its container (by more than 1 px) or reaching past its
    right edge."""
    problems = []
    for chart in page.evaluate(LAYOUT_JS):
        where = f"{path}: chart {chart['id']}"
        problems += [f"{where}: {o} overlap" for o in chart["overlaps"]]
        if chart["width"] > chart["container"] + 1 or chart["right"] > chart["containerRight"] + 1:
            problems.append(f"{where}: {chart['width']:.0f} px wide overflows its {chart['container']:.0f} px container")
    return problems


def check_reading(page, path: str) -> list[str]:
    """What a reader of the open page would meet as machine output or broken layout at the context's
    viewport width (:data:`READING_JS`): sideways scroll, a chart's text reaching out of it, cut short or
    overlapping another, a Python literal as a whole cell, caption or chart text, a number in exponent form
    or a year written as a count, a chart without its CSV link."""
    return [f"{path}: {p}" for p in page.evaluate(READING_JS)]


def check_page(context, base: str, path: str, screenshot: Path | None = None, timeout_ms: int = 15000,
               layout: bool = True, reading: bool = False) -> list[str]:
    """Open ``base + path`` and return every problem found: console errors and uncaught exceptions,
    requests to anything but ``base``'s host (aborted), failed or 4xx/5xx local requests, charts that
    vega-embed did not draw or that have no marks, (``layout``) the problems of :func:`check_layout`
    and (``reading``) those of :func:`check_reading`, at the context's viewport width. With
    ``screenshot`` (``<name>.png``), a capture of the viewport there and of the full page beside it
    (``<name>-full.png``; a full-page capture can draw a chart at another width: judge layout at the
    viewport's)."""
    problems: list[str] = []
    page = context.new_page()

    def route(r):
        if r.request.url.startswith(base) or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            problems.append(f"{path}: request leaves the machine: {r.request.url}")
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and problems.append(f"{path}: console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"{path}: uncaught exception: {e}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{path}: HTTP {r.status} for {r.url}"))
    page.on("requestfailed", lambda r: r.url.startswith(base) and problems.append(f"{path}: request failed: {r.url}"))
    try:
        response = page.goto(base + path, wait_until="load", timeout=timeout_ms)
        if response is None or response.status != 200:
            problems.append(f"{path}: page did not load ({response.status if response else 'no response'})")
        try:
            page.wait_for_function(CHARTS_READY_JS, timeout=timeout_ms)
        except Exception:
            pass  # reported chart by chart below
        page.wait_for_load_state("networkidle", timeout=timeout_ms)
        for chart in page.evaluate(CHARTS_JS):
            if not chart["embedded"]:
                problems.append(f"{path}: chart {chart['id']} was not drawn by vega-embed (static SVG left)")
            elif chart["marks"] == 0:
                problems.append(f"{path}: chart {chart['id']} has no marks")
        if layout:
            problems += check_layout(page, path)
        if screenshot:  # as the page opens, before the reading check unfolds its folded parts
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot))
            page.screenshot(path=str(screenshot.with_name(screenshot.stem + "-full.png")), full_page=True)
        if reading:
            problems += check_reading(page, path)
    finally:
        page.close()
    return problems


@pytest.fixture(scope="module")
def browser():
    sync_playwright = _browser_or_skip()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(browser, request):
    given = os.environ.get("JALAPENO_BROWSER_SITE")
    if given:
        out = Path(given)
        if not (out / "index.html").exists():
            pytest.fail(f"JALAPENO_BROWSER_SITE={given} holds no built book (no index.html)")
    else:
        out = request.getfixturevalue("built_book")
    with Site(out) as s:
        yield out, s.url


def _context(browser, width: int):
    return browser.new_context(viewport={"width": width, "height": 900}, service_workers="block")


@pytest.fixture
def context(browser):
    ctx = _context(browser, 1280)
    yield ctx
    ctx.close()


def shot_name(path: str) -> str:
    """The screenshot name of a page of the site: its path without ``.html``, folders joined by ``-``."""
    return path.removesuffix(".html").replace("/", "-")


@pytest.mark.parametrize("device", list(WIDTHS))
def test_every_page_loads_cleanly_and_reads_as_a_reader_writes_it(site, browser, device):
    out, url = site
    pages = sorted(str(p.relative_to(out)) for p in out.rglob("*.html") if "_static" not in p.parts)
    assert {"index.html", "intro.html", "search.html", "figures.html", "chapters/roofline.html"} <= set(pages)
    width = WIDTHS[device]
    ctx = _context(browser, width)
    problems = []
    try:
        for path in pages:
            problems += check_page(ctx, url, path, SCREENSHOTS / f"{shot_name(path)}-{width}.png", reading=True)
    finally:
        ctx.close()
    assert problems == []
    for path in pages:  # a capture at the viewport's size and of the full page, of every page
        for suffix in ("", "-full"):
            assert (SCREENSHOTS / f"{shot_name(path)}-{width}{suffix}.png").stat().st_size > 5_000


def test_charts_are_interactive_with_marks(site, context):
    _, url = site
    page = context.new_page()
    page.goto(url + "chapters/roofline.html", wait_until="load")
    page.wait_for_function(CHARTS_READY_JS, timeout=15000)
    found = page.evaluate(CHARTS_JS)
    assert len(found) >= 3
    assert all(c["embedded"] and c["marks"] > 0 for c in found), found
    page.close()


def test_sidebar_navigation(site, context):
    _, url = site
    page = context.new_page()
    page.goto(url + "intro.html", wait_until="load")
    page.locator("nav.bd-links a", has_text="Roofline").first.click()
    page.wait_for_url("**/chapters/roofline.html")
    assert page.locator("h1").first.inner_text().startswith("Roofline")
    page.locator("nav.bd-links a", has_text="Figures").first.click()
    page.wait_for_url("**/figures.html")
    assert page.locator("figure.jalapeno-figure img").count() >= 5
    page.close()


def test_search_finds_a_known_word(site, context):
    _, url = site
    page = context.new_page()
    page.goto(url + "search.html?q=roofline", wait_until="load")
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=15000)
    assert any("roofline" in (a or "") for a in results.evaluate_all("els => els.map(e => e.href)"))
    page.close()


def _explorable_chart(context, url: str, chapter: str, control: str):
    """Open a chapter, wait for its charts, and return (page, the chart holding ``control``)."""
    page = context.new_page()
    page.goto(url + f"chapters/{chapter}.html", wait_until="load")
    page.wait_for_function(CHARTS_READY_JS, timeout=15000)
    return page, page.locator("div.jalapeno-chart", has=page.locator(control))


def _marks_change(page, chart, act) -> None:
    """Run ``act`` and assert that the chart's marks change."""
    before = chart.locator("svg.marks").inner_html()
    act()
    page.wait_for_function("([el, old]) => el.innerHTML !== old",
                           arg=[chart.locator("svg.marks").element_handle(), before], timeout=5000)
    assert chart.locator("svg.marks").inner_html() != before


def test_explorable_figure_slider_changes_the_marks(site, context):
    _, url = site
    page, chart = _explorable_chart(context, url, "reading-the-numbers", "input[name='knob_jalapeno_sustained_w']")
    assert chart.count() == 1
    slider = chart.locator("input[name='knob_jalapeno_sustained_w']")
    assert slider.input_value() == "550"
    _marks_change(page, chart, lambda: slider.evaluate(
        "el => { el.value = el.min; el.dispatchEvent(new Event('input', {bubbles: true})); }"))
    allin = chart.locator("input[name='knob_jalapeno_allin_w']")
    _marks_change(page, chart, lambda: allin.evaluate(
        "el => { el.value = el.max; el.dispatchEvent(new Event('input', {bubbles: true})); }"))
    page.close()


def test_pareto_selectors_change_the_marks(site, context):
    _, url = site
    page, charts = _explorable_chart(context, url, "pareto", "select[name='knob_power_basis']")
    chart = charts.first
    for name, value in (("knob_power_basis", "all-in-proportional"), ("knob_scenario", "high")):
        _marks_change(page, chart, lambda: chart.locator(f"select[name='{name}']").select_option(value))
    page.close()


def _broken_site(folder: Path) -> None:
    """A page as the book writes it, with one good chart, one broken chart and one image from the web."""
    import altair as alt
    import polars as pl

    (folder / "_static").mkdir(parents=True)
    (folder / "_static" / "vega-bundle.js").write_text(pages.runtime_script())
    good = alt.Chart(pl.DataFrame({"x": [1, 2, 3]})).mark_point().encode(x="x:Q").to_dict()
    good_html = charts._render(good)["text/html"]
    # the same output with a spec that vega-lite refuses (vl-convert would refuse to draw its static SVG)
    good_id = re.search(r'id="(fig-[0-9a-f]+)"', good_html).group(1)
    bad_html = good_html.replace(good_id, "fig-broken000000").replace(
        '"mark": {"type": "point"}', '"mark": {"type": "no-such-mark"}')
    assert "no-such-mark" in bad_html
    body = good_html + bad_html
    (folder / "broken.html").write_text(
        '<!doctype html><html><head><script src="_static/vega-bundle.js"></script></head><body>'
        f'{body}<img src="http://example.com/tracker.png"></body></html>')
    (folder / "good.html").write_text(
        '<!doctype html><html><head><script src="_static/vega-bundle.js"></script></head><body>'
        f'{good_html}</body></html>')


def test_checker_reports_a_broken_chart_and_an_external_request(browser, context, tmp_path):
    _broken_site(tmp_path)
    with Site(tmp_path) as s:
        assert check_page(context, s.url, "good.html") == []
        problems = check_page(context, s.url, "broken.html", timeout_ms=5000)
    text = "\n".join(problems)
    assert "request leaves the machine: http://example.com/tracker.png" in text
    assert "console error" in text
    assert "was not drawn by vega-embed" in text or "has no marks" in text
    assert len([p for p in problems if "chart" in p and "fig-" in p]) == 1  # the good chart passed


def _crowded_site(folder: Path) -> None:
    """A page as the book writes it with a tidy chart and a crowded one: long category labels set
    level with no wrapping and no overlap removal, a legend of long labels in columns narrower than its
    labels, and a fixed width of 900 px, wider than a phone."""
    import altair as alt
    import polars as pl

    (folder / "_static").mkdir(parents=True)
    (folder / "_static" / "vega-bundle.js").write_text(pages.runtime_script())
    names = [f"a long category label number {i}" for i in range(8)]
    df = pl.DataFrame({"name": names, "value": list(range(8))})
    tidy = charts.fit_width(alt.Chart(df).mark_bar().encode(y=alt.Y("name:N"), x="value:Q"))
    crowded = alt.Chart(df).mark_bar().encode(
        x=alt.X("name:N", axis=alt.Axis(labelAngle=0, labelOverlap=False, labelExpr="datum.label", labelLimit=0)),
        y="value:Q", color=alt.Color("name:N", legend=alt.Legend(columns=1, rowPadding=-14, labelLimit=0)),
    ).properties(width=900)
    with alt.theme.enable(charts.THEME):
        body = "".join(charts._render(c.to_dict())["text/html"] for c in (tidy, crowded))
    (folder / "crowded.html").write_text(
        '<!doctype html><html><head><link rel="stylesheet" href="_static/jalapeno.css">'
        '<script src="_static/vega-bundle.js"></script></head><body><main style="max-width: 358px">'
        f'{body}</main></body></html>')
    (folder / "_static" / "jalapeno.css").write_text((ROOT / "book" / "_static" / "jalapeno.css").read_text())


def test_checker_reports_overlapping_labels_and_an_overflowing_chart(browser, tmp_path):
    _crowded_site(tmp_path)
    ctx = _context(browser, WIDTHS["phone"])
    try:
        with Site(tmp_path) as s:
            problems = check_page(ctx, s.url, "crowded.html", timeout_ms=10000)
    finally:
        ctx.close()
    charts_with_problems = {p.split(": ")[1] for p in problems}
    assert len(charts_with_problems) == 1, problems  # the tidy chart passed
    text = "\n".join(problems)
    assert 'axis labels "a long category label number 0" and "a long category label number 1" overlap' in text
    assert "legend labels" in text
    assert "overflows its" in text


def _unreadable_site(folder: Path) -> None:
    """Two pages as the book writes them: ``good.html``, a table, a sentence and a chart with its CSV link
    as a reader writes them; ``bad.html``, the machine output the reading check must name, one of each."""
    import altair as alt
    import polars as pl

    (folder / "_static").mkdir(parents=True)
    (folder / "_static" / "vega-bundle.js").write_text(pages.runtime_script())
    labels = pl.DataFrame({"x": [1.0, 1.0, 10.0], "y": [1.0, 1.0, 1.0],
                           "label": ["first label", "second label", "a label running off the right edge"]})
    crowded = alt.Chart(labels).mark_text(align="left").encode(x="x:Q", y="y:Q", text="label:N").properties(
        width=300, autosize=alt.AutoSizeParams(type="none"))  # drawn as it is: a label past the edge is cut off
    tidy = charts.fit_width(alt.Chart(pl.DataFrame({"x": [1, 2, 3]})).mark_point().encode(x="x:Q"))
    with alt.theme.enable(charts.THEME):
        tidy_html, crowded_html = (charts._render(c.to_dict())["text/html"] for c in (tidy, crowded))
    link = '<p class="jalapeno-chart-data">Data: <a href="x.csv">x.csv</a></p>'
    (folder / "_static" / "jalapeno.css").write_text((ROOT / "book" / "_static" / "jalapeno.css").read_text())
    head = ('<!doctype html><html><head><meta name="viewport" content="width=device-width">'
            '<link rel="stylesheet" href="_static/jalapeno.css"><script src="_static/vega-bundle.js"></script>'
            '</head><body><article style="max-width: 358px">')
    (folder / "good.html").write_text(
        head + "<table><tr><th>run date</th><td>2026-08-25</td><td>yes</td><td>fp8</td><td>1,024/1,024, 8,192/1,024</td>"
        "</tr></table><p>A 2,048-token prompt in 2026, 47,190,000 bytes, 6.5 × 10²⁷x.</p>"
        f'<div class="output">{tidy_html}{link}</div></article></body></html>')
    (folder / "bad.html").write_text(
        head + "<table><tr><td>None</td><td>True</td><td>'fp8'</td><td>[1024, 8192]</td></tr></table>"
        "<figure><figcaption>False</figcaption></figure><p>run 2.0261e+07 date (YYYYMMDD), results of 2,026.</p>"
        f'<div style="width: 1200px">a line wider than a phone</div><div class="output">{crowded_html}</div>'
        "</article></body></html>")


def test_reading_checker_names_each_kind_of_machine_output(browser, tmp_path):
    _unreadable_site(tmp_path)
    ctx = _context(browser, WIDTHS["phone"])
    try:
        with Site(tmp_path) as s:
            assert check_page(ctx, s.url, "good.html", timeout_ms=10000, reading=True) == []
            problems = check_page(ctx, s.url, "bad.html", timeout_ms=10000, layout=False, reading=True)
    finally:
        ctx.close()
    text = "\n".join(problems)
    for literal in ("None", "True", "'fp8'", "[1024, 8192]"):
        assert f"a Python literal as a whole td: {literal}" in text
    assert "a Python literal as a whole figcaption: False" in text
    assert 'a number in exponent form: "2.0261e+07 date (YYYYMMDD)' in text
    assert 'a year of the 2020s with a thousands separator: "2,026' in text
    assert "page scrolls sideways" in text
    assert 'texts "first label" and "second label" overlap' in text
    assert 'text "a label running off the right edge" reaches out of the chart' in text
    assert "no link to its CSV below it" in text


def test_the_raw_bundle_would_break_the_book(browser, context, tmp_path):
    """Why the book wraps the chart runtime: loaded as is next to Sphinx's doctools.js (which declares
    a global ``_``), the bundle throws and no chart becomes interactive."""
    (tmp_path / "page.html").write_text(
        '<!doctype html><html><head><script>const _ = function(){};</script>'
        '<script src="raw.js"></script></head><body></body></html>')
    (tmp_path / "wrapped.html").write_text(
        '<!doctype html><html><head><script>const _ = function(){};</script>'
        '<script src="wrapped.js"></script></head><body></body></html>')
    (tmp_path / "wrapped.js").write_text(pages.runtime_script())
    import vl_convert

    (tmp_path / "raw.js").write_text(vl_convert.javascript_bundle())
    with Site(tmp_path) as s:
        problems = check_page(context, s.url, "page.html", timeout_ms=5000)
        assert check_page(context, s.url, "wrapped.html", timeout_ms=5000) == []
    assert any("has already been declared" in p for p in problems), problems


#: In the page: the text of every paragraph, list item and heading of the article whose box starts above
#: ``arguments[0]`` px (the first screen of a viewport that tall), in order.
FIRST_SCREEN_JS = """(height) => [...document.querySelectorAll('article h1, article h2, article p, article li')]
    .filter(el => { const b = el.getBoundingClientRect(); return b.top < height && b.bottom > 0 && b.height > 0; })
    .map(el => el.innerText)"""


def test_the_verdict_page_opens_with_the_answer_on_one_screen(site, browser):
    import json

    out, url = site
    verdict = json.loads((out / "numbers.json").read_text())["verdict"]  # what the page's prose quotes
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, service_workers="block")
    try:
        page = ctx.new_page()
        page.goto(url + "chapters/verdict.html", wait_until="load")
        screen = " ".join(" ".join(page.evaluate(FIRST_SCREEN_JS, 900)).split())
        page.close()
    finally:
        ctx.close()
    # the seeds' published matched ratios (53.7x, 104.3x, ~56x), as the page prints them
    assert [verdict[k] for k in ("r_gptoss", "r_dsr1", "r_kimi")] == ["53.7", "104.3", "56"]
    for printed in ("53.7x", "104.3x", "56x"):
        assert printed in screen, screen
    assert f"Jalapeño serves {verdict['pw_rated']}x the tokens per watt" in screen, screen  # the rated per-watt answer
    assert "best interactivity" in screen and "not its overall performance" in screen, screen
    # the rest of the answer: the MTP condition and what no public measurement confirms
    assert verdict["mtp_ratio"] in screen and verdict["perf_confirm"] in screen, screen


def test_wide_tables_stack_on_a_phone(site, browser):
    """A table with labelled cells (a chapter's, the changelog's) stacks at 390 px: each cell a block led
    by its column's header (``data-label``); at 1,440 px it is a table. (That no page scrolls sideways at
    either width is the every-page test's.)"""
    out, url = site
    cells = {}
    for device in ("phone", "desktop"):
        ctx = _context(browser, WIDTHS[device])
        page = ctx.new_page()
        try:
            for path, table in (("chapters/roofline.html", "div.jalapeno-table"), ("changelog.html", "table.jalapeno-reflow")):
                page.goto(url + path, wait_until="load")
                page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
                cells[device, path] = page.evaluate(f"""() => {{
                    const td = document.querySelector('{table} td[data-label]:not([data-label=""])');
                    if (!td) return [null, null, null];
                    return [getComputedStyle(td).display, getComputedStyle(td, '::before').content, td.dataset.label]; }}""")
        finally:
            ctx.close()
    for (device, path), (display, before, label) in cells.items():
        if device == "phone":
            assert (display, before) == ("block", f'"{label}: "'), path
        else:
            assert display == "table-cell" and before == "none", path
