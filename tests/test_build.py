"""The book build and the reruns: offline HTML, parameters, clear errors, nothing half-written
(golden cases 8, 9, 10)."""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from jalapeno.publish import build, cli, execute, output, pages, scenarios, search

ROOT = Path(__file__).resolve().parent.parent
JALAPENO = [sys.executable, "-m", "jalapeno.publish.cli"]


@pytest.fixture(scope="module")
def book(built_book):
    return built_book, built_book / "index.html"


def text_of(page: Path) -> str:
    t = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", page.read_text(), flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", t))


def test_book_has_every_chapter_figure_and_the_claims_table(book):
    out, index = book
    assert index == out / "index.html" and index.exists()
    chapters = {p.stem for p in (out / "chapters").glob("*.html")}
    assert chapters == set(scenarios.notebook_names())
    assert len(list((out / "figures").glob("*.svg"))) >= 5
    reading = text_of(out / "chapters" / "reading-the-numbers.html")
    assert "44,960 tok/s/kW" in reading and "1.868 ms" in reading
    assert "GB200: 44,960 tok/s/kW" in reading and "not checkable" in reading  # a ratio's parts by name and value
    assert "1,343 LPUs" in text_of(out / "chapters" / "roofline.html")


def test_book_loads_nothing_from_the_network(book):
    out, _ = book
    pages.check_offline(out)  # raises on any external script, stylesheet, image or frame
    for page in out.rglob("*.html"):
        html = page.read_text()
        assert not re.search(r"https?://[^\"' ]*(unpkg|jsdelivr|cdnjs|googleapis|mathjax)", html, re.I), page
    chapter = (out / "chapters" / "roofline.html").read_text()
    assert '<script src="../_static/vega-bundle.js' in chapter
    assert (out / "_static" / "vega-bundle.js").stat().st_size > 100_000
    assert chapter.count("vegaEmbed(el") >= 3


def test_check_offline_catches_a_cdn_script(tmp_path):
    (tmp_path / "p.html").write_text('<html><script src="https://cdn.jsdelivr.net/npm/vega@6"></script></html>')
    with pytest.raises(build.BuildError, match="p.html:1 loads from the network"):
        pages.check_offline(tmp_path)


def test_rerun_with_a_parameter_changes_the_chapter(tmp_path, capsys):
    """The chapter that takes the parameter shows its new numbers; a chapter of the same build that does
    not take it says on its banner that it was computed with its defaults (its numbers are the default
    book's: the verdict's 2.42x at sustained power, against the rebuilt chapter's)."""
    out = tmp_path / "whatif"
    assert cli.main(["build", "reading-the-numbers", "verdict", "-p", "baseline_power_w", "1400", "--out", str(out)]) == 0
    page = text_of(out / "chapters" / "reading-the-numbers.html")
    assert "38,537 tok/s/kW" in page  # 53,952 tok/s / 1.4 kW
    assert "changed" in page
    assert not (out / "chapters" / "roofline.html").exists()
    verdict = text_of(out / "chapters" / "verdict.html")
    assert "This page takes none of these parameters: it is computed with its defaults." in verdict
    assert "2.42x" in verdict and "rebuilt with parameters other than the defaults" in verdict


@pytest.mark.parametrize("argv, fragment", [
    (["build", "-p", "concurency", "128"], "unknown parameter 'concurency'; valid parameters: "),
    (["build", "no-such-chapter"], "unknown notebook 'no-such-chapter'; valid notebooks: "),
    (["build", "roofline", "-p", "context_tokens", "64.0"], "parameter 'context_tokens' must be an integer"),
    (["build", "roofline", "-p", "models", "gpt-oss-120b"], "parameter 'models' must be a non-empty list"),
    # a declared choice is checked before anything runs (the notebook would fail otherwise, in a cell)
    (["build", "pareto", "-p", "concurrency_cap", "bogus"],
     "unknown concurrency_cap value 'bogus'; valid concurrency_cap values: benchmark, none"),
    # a declared range, NaN, infinities and names: refused before any notebook runs
    (["build", "roofline", "-p", "context_tokens", "-5"], "parameter 'context_tokens' must be in [1, 1048576] tokens; got -5"),
    (["build", "roofline", "-p", "context_tokens", "0"], "parameter 'context_tokens' must be in [1, 1048576] tokens; got 0"),
    (["build", "systems", "-p", "jalapeno_scale_up_tb_s", ".nan"], "'jalapeno_scale_up_tb_s' must be a finite number; got nan"),
    (["build", "reading-the-numbers", "-p", "baseline_power_w", ".inf"], "'baseline_power_w' must be a finite number; got inf"),
    (["build", "roofline", "-p", "focus_chip", "gb400"], "unknown HBM chip 'gb400'; valid HBM chips: jalapeno, gb200"),
    # a chip the serving model cannot time (its weights in SRAM), refused before its notebook fails in a cell
    (["build", "roofline", "-p", "focus_chip", "groq-3-lpu"],
     "parameter 'focus_chip': chip 'groq-3-lpu' has no HBM bandwidth and peak FLOP/s figures, which this chapter "
     "times; valid HBM chips: jalapeno, gb200"),
    (["build", "roofline", "-y", "models: [gpt-oss-120b, gpt-5]"], "unknown model 'gpt-5'; valid models: gpt-oss-120b"),
])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, argv, fragment):
    out = tmp_path / "site"
    proc = subprocess.run(JALAPENO + argv + ["--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert fragment in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_failing_notebook_names_itself_and_keeps_the_old_output(tmp_path, monkeypatch):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nb = json.loads((ROOT / "notebooks" / "claims.ipynb").read_text())
    nb["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                        "source": ["raise RuntimeError('a cell that fails')"]})
    (folder / "claims.ipynb").write_text(json.dumps(nb))
    monkeypatch.setattr(scenarios, "NOTEBOOKS_DIR", folder)
    out = tmp_path / "site"
    out.mkdir()
    (out / "old.txt").write_text("previous build")
    output.write_manifest(out)  # as an earlier build leaves it
    with pytest.raises(build.BuildError, match="notebook 'claims' failed .*RuntimeError: a cell that fails"):
        build.build(["claims"], {}, out, use_cache=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.jalapeno-lock", "notebooks", "site"]
    assert (out / "old.txt").read_text() == "previous build"


def test_missing_kernel_is_reported_with_notebook_and_kernel(tmp_path, monkeypatch):
    monkeypatch.setattr(execute, "KERNEL", "jalapeno-venv")
    with pytest.raises(build.BuildError, match="notebook 'roofline' \\(kernel 'jalapeno-venv'\\) could not run"):
        build.build(["roofline"], {}, tmp_path / "site")


def test_papermill_direct_run_rejects_string_for_a_list(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError, match="parameter 'models' must be a non-empty list"):
        papermill.execute_notebook(str(ROOT / "notebooks" / "roofline.ipynb"), str(tmp_path / "o.ipynb"),
                                   parameters={"models": '["gpt-oss-120b"]'}, kernel_name="python3",
                                   progress_bar=False)


def test_papermill_direct_run_stops_on_an_unknown_parameter(tmp_path):
    """papermill only warns about a parameter the notebook does not declare; the notebook stops."""
    with pytest.raises(papermill.PapermillExecutionError,
                       match=re.escape("unknown parameter 'show_statuss'; valid parameters: show_status")):
        papermill.execute_notebook(str(ROOT / "notebooks" / "claims.ipynb"), str(tmp_path / "o.ipynb"),
                                   parameters={"show_statuss": "all"}, kernel_name="python3", progress_bar=False)


def test_numbers_typed_for_text_and_text_for_numbers_reach_the_notebook_checked():
    runs = scenarios.plan(["reading-the-numbers"], {"run_id": 20786863188, "baseline_power_w": "1.4e3"})
    assert runs == {"reading-the-numbers": {"run_id": "20786863188", "baseline_power_w": 1400.0}}


def test_the_readme_parameters_file_is_shipped_and_valid():
    values = scenarios.load_parameter_file(ROOT / "examples" / "my-assumptions.yml")
    assert "examples/my-assumptions.yml" in (ROOT / "README.md").read_text()
    runs = scenarios.plan(None, values)
    assert runs["reading-the-numbers"]["baseline_power_w"] == 1400.0 and runs["roofline"]["context_tokens"] == 32768


def _outputs(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return json.dumps([c.get("outputs", []) for c in nb.cells if c.cell_type == "code"], sort_keys=True)


def test_same_outputs_from_any_working_directory(tmp_path):
    """Run from the repo root, from notebooks/ and from a folder outside the repository."""
    results = []
    for i, cwd in enumerate([ROOT, ROOT / "notebooks", tmp_path]):
        target = tmp_path / f"run{i}.ipynb"
        subprocess.run([sys.executable, "-m", "papermill", str(ROOT / "notebooks" / "roofline.ipynb"), str(target),
                        "-k", "python3", "--no-progress-bar"], cwd=cwd, check=True, capture_output=True)
        results.append(_outputs(target))
    assert results[0] == results[1] == results[2]


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_committed_notebooks_are_clean(path):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert "papermill" not in nb["metadata"]
    tagged = [c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", [])]
    assert len(tagged) == 1
    for cell in nb["cells"]:
        assert "execution" not in cell["metadata"]
        if cell["cell_type"] == "code":
            assert cell["execution_count"] is not None  # nbval compares only executed cells
            assert all(o["output_type"] != "error" for o in cell["outputs"])
    blob = json.dumps(nb)
    assert not re.search(r"altair-viz-[0-9a-f]{32}|/(root|home|tmp|work)/", blob)


# ---- the book as a product: cache, parallel execution, figures, provenance pages (issue 6) ------------

import hashlib  # noqa: E402
import shutil  # noqa: E402
import tomllib  # noqa: E402

import yaml  # noqa: E402

from jalapeno.errors import JalapenoError  # noqa: E402

SMALL = ["reading-the-numbers", "roofline"]


@pytest.fixture
def small_book(tmp_path, monkeypatch, own_notebook_cache):
    """Two chapters copied to a scratch notebooks/ folder, with a notebook cache of their own."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in SMALL:
        shutil.copy(ROOT / "notebooks" / f"{name}.ipynb", folder)
    monkeypatch.setattr(scenarios, "NOTEBOOKS_DIR", folder)
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(own_notebook_cache))
    return folder


def test_unchanged_notebooks_come_from_the_cache_and_an_edited_one_reruns(small_book, tmp_path, capfd):
    out = tmp_path / "site"
    build.build(out=out, jobs=2)
    assert sorted(build.last_report.status) == SMALL
    assert all(s.startswith("executed in") for s in build.last_report.status.values())
    first = {p: (out / p).read_bytes() for p in ("numbers.json", "figures.html", "build-info.json",
                                                "chapters/roofline.html", "figures/roofline.png")}
    err = capfd.readouterr().err
    assert "roofline: executing (defaults)" in err and "roofline: executed in" in err
    assert re.search(r"built \d+ pages, 7 figures, \d+ warnings in [\d.]+ s \(2 notebooks executed, 0 from the cache\)", err)

    build.build(out=out)
    assert all(s.startswith("cached") for s in build.last_report.status.values())
    assert {p: (out / p).read_bytes() for p in first} == first  # the same site, byte for byte
    assert "(0 notebooks executed, 2 from the cache)" in capfd.readouterr().err

    nb = json.loads((small_book / "roofline.ipynb").read_text())
    assert nb["cells"][-1]["cell_type"] == "markdown"
    nb["cells"][-1]["source"].append("\n\nOne more sentence.")  # prose only: its outputs cannot change
    (small_book / "roofline.ipynb").write_text(json.dumps(nb))
    build.build(out=out)
    assert all(s.startswith("cached") for s in build.last_report.status.values())
    assert "One more sentence." in text_of(out / "chapters" / "roofline.html")
    prose_edited = (out / "chapters" / "roofline.html").read_bytes()
    build.build(out=out, use_cache=False)  # the same page as an execution of the edited notebook
    assert build.last_report.status["roofline"].startswith("executed")
    assert (out / "chapters" / "roofline.html").read_bytes() == prose_edited

    code = next(c for c in nb["cells"] if c["cell_type"] == "code" and "glue_all(ch)" in "".join(c["source"]))
    code["source"].append("\nprint('One more line of code.')")  # code: executed again
    (small_book / "roofline.ipynb").write_text(json.dumps(nb))
    build.build(out=out)
    assert build.last_report.status["roofline"].startswith("executed")
    assert build.last_report.status["reading-the-numbers"].startswith("cached")
    assert "One more line of code." in text_of(out / "chapters" / "roofline.html")
    assert json.loads((out / "numbers.json").read_text())["roofline"]["ctx"] == "8,192"

    build.build(out=out, parameters={"context_tokens": 32768})  # new parameters: a new execution
    assert build.last_report.status["roofline"].startswith("executed")
    assert json.loads((out / "numbers.json").read_text())["roofline"]["ctx"] == "32,768"


def test_every_figure_is_exported_as_svg_and_png_and_listed(book):
    out, _ = book
    svgs = sorted((out / "figures").glob("*.svg"))
    assert len(svgs) >= 5
    import html as _html

    page = _html.unescape(text_of(out / "figures.html")).replace("\u2019", "'")  # Sphinx's smart quotes
    info = json.loads((out / "build-info.json").read_text())
    assert sorted(info["figures"]) == [p.stem for p in svgs]
    for svg in svgs:
        png = svg.with_suffix(".png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
        assert svg.read_text().startswith("<svg")
        caption = pages.figure_caption(svg.read_text(), "")
        assert caption and caption in page, svg.stem
        assert f"name: {svg.stem}" in page
    assert "regenerate: .venv/bin/jalapeno build roofline" in page
    assert "regenerate: .venv/bin/jalapeno build reading-the-numbers" in page
    html = (out / "figures.html").read_text()
    assert html.count('<figure class="jalapeno-figure">') == len(svgs)


def test_provenance_pages(book):
    out, _ = book
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = text_of(out / "environment.html")
    for req in project["dependencies"] + project["optional-dependencies"]["book"]:
        dist, _, pinned = req.split(";")[0].strip().partition("==")
        assert f"{dist} " in env and f" {pinned} " in env, req
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    cite = text_of(out / "cite.html")
    key = "jalapeno_book_" + str(cff["version"]).replace(".", "_")
    assert f"version: {cff['version']}" in cite and "@misc" in cite and key in cite
    data = text_of(out / "data.html")
    chips = ROOT / "data" / "chips.csv"
    assert hashlib.sha256(chips.read_bytes()).hexdigest()[:16] in data
    changelog, this_build = text_of(out / "changelog.html"), text_of(out / "this-build.html")
    versions = pages.published_numbers()
    latest = list(versions)[-1]
    assert f"Version {latest}" in changelog and "computed with the default parameters" in this_build
    numbers = json.loads((out / "numbers.json").read_text())
    assert numbers == pages.committed_numbers()  # the default build quotes what the committed notebooks do
    diff = pages.diff_numbers({c: versions[latest].get(c, {}) for c in numbers}, numbers)
    assert f"differ from version {latest}: {len(diff) or 'none'}." in this_build


def test_citation_matches_the_package_version():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["cff-version"] == "1.2.0"
    assert str(cff["version"]) == project["version"]
    assert cff["title"] == yaml.safe_load((ROOT / "book" / "_config.yml").read_text())["title"]
    assert (ROOT / "book" / "published-numbers" / f"{project['version']}.json").exists()


def test_recorded_numbers_are_never_silently_overwritten(tmp_path, monkeypatch):
    book_dir = tmp_path / "book"
    (book_dir / "published-numbers").mkdir(parents=True)
    (book_dir / "published-numbers" / "9.9.9.json").write_text('{"roofline": {"ctx": "1"}}\n')
    monkeypatch.setattr(pages, "BOOK_DIR", book_dir)
    with pytest.raises(JalapenoError, match="already records other numbers for version 9.9.9"):
        pages.record_numbers("9.9.9")
    path = pages.record_numbers("9.9.9", force=True)
    assert json.loads(path.read_text()) == pages.committed_numbers()
    assert pages.record_numbers("9.9.9") == path  # the same numbers again: fine
    assert list(pages.published_numbers()) == ["9.9.9"]


def test_figure_caption_is_the_chart_title():
    svg = '<g class="mark-text role-title-text" role="graphics-symbol"><text x="0">A &amp; B</text></g>'
    assert pages.figure_caption(svg, "fallback") == "A & B"
    assert pages.figure_caption("<svg></svg>", "fallback") == "fallback"
    # a title in two lines (tspans) is one sentence; a diagram's panel title is not the figure's
    two_lines = ('<g class="mark-text role-title-text"><text><tspan>one of 8</tspan></text></g>'
                 '<g class="mark-text role-title-text"><text><tspan>Decode sits far left of every ridge</tspan>'
                 '<tspan x="0" dy="16">point, prefill to the right</tspan></text></g>')
    assert pages.figure_caption(two_lines, "") == "Decode sits far left of every ridge point, prefill to the right"


def test_jobs_must_be_positive(tmp_path):
    proc = subprocess.run(JALAPENO + ["build", "--jobs", "0", "--out", str(tmp_path / "s")], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 2 and "--jobs must be a positive number of notebooks, got 0" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_changelog_counts_changed_new_and_removed_numbers_apart(monkeypatch):
    versions = {"0.1.0": {"ch": {"a": "1", "b": "2"}}, "0.2.0": {"ch": {"a": "1.5", "c": "3"}}}
    monkeypatch.setattr(pages, "published_numbers", lambda: versions)
    monkeypatch.setattr(pages, "reasons", lambda v: {"ch": {"a": "recalibrated", "*": "a new section"}} if v == "0.2.0" else {})
    page = pages.changelog_page()
    assert "Changes from version 0.1.0: 1 changed, 1 new, 1 removed." in page
    # grouped by chapter (changelog_page: changes_by_chapter): only the changed number is a table row, with the
    # reason given for it; the chapter's reason ("*") is said once; a number no prose names shows its key
    assert "<summary>ch: 1 changed, 1 new, 1 removed</summary>" in page and "Why: a new section" in page
    assert ('<td data-label="number"><code>a</code></td><td data-label="before">1</td><td data-label="after">1.5</td>'
            '<td data-label="why">recalibrated</td>') in page
    assert "**New** (1):" in page and "- `c`: 3\n" in page and "**Removed** (1):" in page and "- `b`: 2\n" in page
    assert "## This build" not in page and "computed with" not in page  # the same page for every build of a version: this build's numbers are apart
    monkeypatch.setattr(pages, "number_labels", lambda current=None: {})
    ours = pages.this_build_page({"ch": {"a": "1.5", "c": "4"}}, None, True)
    assert "computed with changed parameters. Numbers of its chapters that differ from version 0.2.0: 1." in ours
    assert '<td data-label="version 0.2.0">3</td><td data-label="this build">4</td>' in ours


def test_the_table_of_contents_is_the_one_list_of_chapters():
    files = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(scenarios.notebook_names()) == files
    assert scenarios.notebook_names()[:2] == ["verdict", "reading-the-numbers"]  # the book's order


def test_a_committed_notebook_is_parsed_once_for_each_content_of_its_file(tmp_path, monkeypatch):
    """Staging asks for each committed notebook several times: the same content is one parse; an edit is a
    new one."""
    shutil.copy(scenarios.notebook_path("roofline"), tmp_path / "roofline.ipynb")
    monkeypatch.setattr(scenarios, "NOTEBOOKS_DIR", tmp_path)
    first = scenarios.committed_notebook("roofline")
    assert scenarios.committed_notebook("roofline") is first
    nb = json.loads((tmp_path / "roofline.ipynb").read_text())
    nb["cells"][0]["source"] = "# Edited"
    (tmp_path / "roofline.ipynb").write_text(json.dumps(nb))
    assert scenarios.committed_notebook("roofline").cells[0].source == "# Edited"


def test_every_number_that_moved_in_the_latest_version_says_why():
    versions = pages.published_numbers()
    names = list(versions)
    latest, before = versions[names[-1]], versions[names[-2]]
    why = pages.reasons(names[-1])
    unexplained = [(c, k) for c, k, a, b in pages.diff_numbers(before, latest) if not pages.why(why, c, k)]
    assert unexplained == []


def test_search_finds_published_numbers_as_the_seeds_print_them(book):
    out, _ = book
    text = (out / "searchindex.js").read_text()
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    def pages(typed: str) -> set[str]:  # the pages a query finds: a number is looked up as its search word
        term = search.number_word(typed)
        found = index["terms"].get(term, [])
        return {index["docnames"][i] for i in ([found] if isinstance(found, int) else found)}
    # the matched ratios of gpt-oss-120b and DeepSeek-R1: the verdict, and a chapter that treats each; the
    # claims page prints 53.70 and is found by 53.7, 53.70 and 53.7x alike
    assert pages("53.7") == pages("53.70") == pages("53.7x")
    assert {"chapters/verdict", "chapters/claims"} <= pages("53.7") and pages("53.7") & {"chapters/pareto", "chapters/caveats"}
    assert "chapters/verdict" in pages("104.3") and pages("104.3") & {"chapters/pareto", "chapters/caveats"}
    assert "chapters/reading-the-numbers" in pages("44,960") and pages("44960") == pages("44,960")  # GB200's tok/s/kW
    assert "splitQuery" in (out / "_static" / "language_data.js").read_text()


def test_every_figure_has_its_data_and_every_data_file_is_linked(book):
    out, _ = book
    for svg in (out / "figures").glob("*.svg"):
        assert svg.with_suffix(".csv").stat().st_size > 0, svg.name
    data_page = (out / "data.html").read_text()
    for path in (ROOT / "data").rglob("*.csv"):
        rel = path.relative_to(ROOT / "data").as_posix()
        assert f'href="data/{rel}"' in data_page and (out / "data" / rel).read_bytes() == path.read_bytes()


def test_every_chart_links_its_data_and_shows_its_image_without_scripts(book):
    """Under each chart of every chapter page: its SVG in a <noscript>, links to its CSV, image and spec,
    and the command that regenerates it; the spec is the one drawn (its id is the element's) and the CSV
    the chart's data under a reader's headers, without the internal ``dataset`` column."""
    import html as _html

    from jalapeno import charts

    out, _ = book
    shown = []
    for page in sorted((out / "chapters").glob("*.html")):
        parts = re.split(r'<div id="(fig-[0-9a-f]{12})" class="jalapeno-chart"></div>', page.read_text())
        for element, after in zip(parts[1::2], parts[2::2]):
            m = re.search(r'<noscript><img class="jalapeno-chart-static" src="\.\./figures/([a-z0-9-]+)\.svg" alt="([^"]+)"', after)
            assert m, (page.name, element)
            name = m.group(1)
            line = after[after.index('<p class="jalapeno-chart-data">'):].split("</p>")[0]
            for suffix in (".csv", ".svg", ".png", ".vl.json"):
                assert f'href="../figures/{name}{suffix}"' in line and (out / "figures" / f"{name}{suffix}").is_file()
            own = shlex.quote(str(out.resolve().with_name(f"{out.name}-{page.stem}")))  # never the whole book's folder
            assert f"regenerate: <code>.venv/bin/jalapeno build {page.stem} --out {own}</code>" in line
            spec = json.loads((out / "figures" / f"{name}.vl.json").read_text())
            assert charts.spec_id(spec) == element
            assert _html.unescape(m.group(2)) == pages.figure_caption((out / "figures" / f"{name}.svg").read_text(), name)
            header = (out / "figures" / f"{name}.csv").read_text().splitlines()[0]
            assert header == charts.figure_csv(spec).splitlines()[0] and "dataset" not in header.split(","), name
            shown.append(name)
    # every exported figure is drawn once on its chapter's page, the pareto frontiers' under their headers
    assert sorted(shown) == sorted(p.stem for p in (out / "figures").glob("*.svg"))
    header = (out / "figures" / "pareto-gpt-oss-120b.csv").read_text().splitlines()[0]
    assert header.startswith("chip,model,interactivity (tok/s/user),throughput per kW")
    assert "tok/s/kW band low" in header and "tok_s" not in header


def test_following_a_figures_regenerate_command_keeps_the_whole_book(book):
    """The command under a figure of the whole book rebuilds its chapter into a folder of its own
    (``<out>-<chapter>``): run as printed, it leaves the book's folder as the build wrote it, every chapter
    in it, and writes that chapter alone beside it."""
    import html as _html

    out, _ = book
    page = _html.unescape((out / "chapters" / "roofline.html").read_text())
    command = re.search(r"regenerate: <code>(\.venv/bin/jalapeno build roofline[^<]*)<", page).group(1)
    assert f"regenerate: {command}" in _html.unescape(text_of(out / "figures.html"))  # the Figures page's too
    words = shlex.split(command)
    assert words[words.index("--out") + 1] == str(out.resolve().with_name(f"{out.name}-roofline"))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert cli.main(words[1:]) == 0
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert {p.stem for p in (out / "chapters").glob("*.html")} == set(scenarios.notebook_names())
    own = out.with_name(f"{out.name}-roofline")
    assert [p.stem for p in (own / "chapters").glob("*.html")] == ["roofline"]
    assert (own / "figures" / "roofline.svg").read_bytes() == (out / "figures" / "roofline.svg").read_bytes()


def test_the_figures_page_lists_the_seeds_figures_and_links_each_counterpart(book):
    """Every figure the seeds describe, with its seeds; each counterpart is a figure of the default build,
    linked to its entry, and each entry names the seeds' figures it answers."""
    from jalapeno import data

    out, _ = book
    built = {p.stem for p in (out / "figures").glob("*.svg")}
    rows = data.seed_figures()
    every = {c for r in rows.iter_rows(named=True) for c in (r["counterparts"] or "").split(";") if c}
    named, sections = {c for c in every if "#" not in c}, {c for c in every if "#" in c}
    assert named and named - built == set()
    page = (out / "figures.html").read_text()
    assert all(f'href="#figure-{c}"' in page for c in named) and all(f'id="figure-{c}"' in page for c in built)
    # a table the seed prints is answered by a chapter's section: linked to it, and the section is there
    assert sections == {"caveats#what-the-public-data-can-and-cannot-answer"}
    for c in sections:
        chapter, anchor = c.split("#")
        assert f'href="chapters/{chapter}.html#{anchor}"' in page
        assert f'id="{anchor}"' in (out / "chapters" / f"{chapter}.html").read_text()
    import html as _html

    text = _html.unescape(text_of(out / "figures.html")).replace("\u2019", "'")  # Sphinx's smart quotes
    assert all(f"F{i} (Seed" in text for i in range(1, 17)) and "not in this build" not in text
    assert re.search(r"name: roofline ?; chapter: Roofline ?; answers the seeds' F8\b", text)
    # a seed's words in its own corner brackets, so the quote marks inside one (F15) stay paired
    assert "(「延迟-吞吐曲线在极低延迟区间极其陡峭」)" in text and "Locality is king" in text


def test_a_cold_builds_expected_times_name_only_chapters():
    """The order of a build without timings of its own (longest first) names only chapters; a chapter it
    does not name (a new one) needs no entry: it is ordered last until a build has timed it."""
    assert set(execute.EXPECTED_SECONDS) <= set(scenarios.notebook_names())


def test_refresh_reports_the_kernels_stderr_without_its_start_up_note(tmp_path, monkeypatch, capfd):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('import os; os.write(2, b"from the kernel\\n")')])
    nbformat.write(nb, tmp_path / "tiny.ipynb")
    monkeypatch.setattr(scenarios, "NOTEBOOKS_DIR", tmp_path)
    assert execute.refresh(["tiny"]) == [tmp_path / "tiny.ipynb"]
    err = capfd.readouterr().err
    assert "tiny: kernel: from the kernel" in err
    assert "without encryption" not in err


# ---- the landing page quotes the built verdict ---------------------------------------------------------

def test_the_landing_page_quotes_the_verdict_as_its_notebook_glued_it():
    verdict = pages.glued(nbformat.read(scenarios.notebook_path("verdict"), as_version=4))
    text = pages.quote_chapters((ROOT / "book" / "intro.md").read_text(), {"verdict": verdict}, "book/intro.md")
    assert "<!-- jalapeno:" not in text
    answer = " ".join(text.split())
    for printed in ("53.7x", "104.3x", "56x"):  # the seeds' published matched ratios
        assert printed in answer
    assert f"Jalapeño serves {verdict['pw_rated']}x the tokens per watt" in answer  # the rated per-watt ratio
    assert verdict["mtp_ratio"] in answer and verdict["perf_confirm"] in answer
    assert 'href="chapters/verdict.html"' in answer


def test_a_chapter_quote_is_replaced_and_an_unknown_one_refused():
    numbers = {"verdict": {"pw_rated": "1.90"}}
    assert pages.quote_chapters("A <!-- jalapeno:quote verdict/pw_rated -->x lead.", numbers, "p.md") == "A 1.90x lead."
    with pytest.raises(build.BuildError, match=r"p\.md quotes numbers .*verdict/pw_typo: unknown key 'pw_typo'; "
                                               r"verdict's keys: pw_rated"):
        pages.quote_chapters("<!-- jalapeno:quote verdict/pw_typo -->", numbers, "p.md")
    with pytest.raises(build.BuildError, match="the book has no chapter 'verdicts'"):
        pages.quote_chapters("<!-- jalapeno:quote verdicts/pw_rated -->", numbers, "p.md")
    with pytest.raises(build.BuildError, match="this build did not run 'verdict'; quote it inside"):
        pages.quote_chapters("<!-- jalapeno:quote verdict/pw_rated -->", {"roofline": {}}, "p.md")
    with pytest.raises(build.BuildError, match="block for chapter 'verdicts', which the book does not have"):
        pages.quote_chapters("<!-- jalapeno:if-built verdicts -->x<!-- jalapeno:end-if -->", numbers, "p.md")


def test_a_block_whose_chapter_was_not_built_says_so():
    text = ("Intro.\n<!-- jalapeno:if-built verdict -->\nThe answer: <!-- jalapeno:quote verdict/pw_rated -->x.\n"
            "<!-- jalapeno:end-if -->\nMore.")
    assert pages.quote_chapters(text, {"verdict": {"pw_rated": "1.90"}}, "p.md") == "Intro.\n\nThe answer: 1.90x.\n\nMore."
    partial = pages.quote_chapters(text, {"roofline": {}}, "p.md")
    assert partial == "Intro.\n" + pages.NOT_BUILT.format(chapter="verdict") + "\nMore."
    assert "not built" in partial
    # the real landing page in a build without the verdict: no marker, no quote of it left
    intro = pages.quote_chapters((ROOT / "book" / "intro.md").read_text(), {"roofline": {}}, "book/intro.md")
    assert "<!-- jalapeno:" not in intro and "The short answer" not in intro
    assert "The verdict chapter was not built" in intro


# ---- staging: a chapter opens with its results -------------------------------------------------------

def _staged_chapter(changed: bool) -> nbformat.NotebookNode:
    table = ('<div class="jalapeno-table"><table><tr><td>baseline</td><td>gb200</td><td>default</td></tr>'
             f'<tr><td>run_id</td><td>auto</td><td>{"changed" if changed else "default"}</td></tr></table></div>')
    setup = nbformat.v4.new_code_cell('P = setup(globals(), "x")\nch = chapter.compute(**P)',
                                      outputs=[nbformat.v4.new_output("display_data", {"text/html": table})])
    setup.metadata["tags"] = ["hide-input"]
    one_liner = nbformat.v4.new_code_cell('table(ch.tables["a"])\nfigure(ch, "b")')
    one_liner.metadata["tags"] = ["hide-input"]
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title\n\nThe chapter's question."),
        nbformat.v4.new_markdown_cell("Parameters: `baseline` is a chip of `data/chips.csv`."), setup,
        nbformat.v4.new_markdown_cell("## The first result"), one_liner])


@pytest.mark.parametrize("changed, summary", [(False, "This chapter's parameters: all at their defaults"),
                                              (True, "This chapter's parameters: 1 changed")])
def test_staging_folds_a_chapters_parameters_with_their_definitions(changed, summary):
    nb = _staged_chapter(changed)
    pages.fold_parameters(nb)
    assert [c.source.split("\n")[0] for c in nb.cells if c.cell_type == "markdown"] == ["# Title", "## The first result"]
    html = nb.cells[1].outputs[0]["data"]["text/html"]
    opening = '<details class="jalapeno-parameters" open>' if changed else '<details class="jalapeno-parameters">'
    assert html.startswith(f"{opening}<summary>{summary}</summary><p>Parameters: <code>baseline</code> is a chip of "
                           "<code>data/chips.csv</code>.</p>\n<div class=\"jalapeno-table\">")
    assert html.endswith("</table></div></details>")


def test_staging_keeps_a_code_toggle_only_where_the_code_says_something():
    nb = _staged_chapter(False)
    pages.quiet_one_liners(nb)
    assert [c.metadata.get("tags") for c in nb.cells if c.cell_type == "code"] == [["hide-input"], ["remove-input"]]


def test_a_banner_shows_an_unset_parameter_as_what_it_stands_for():
    rows = pages.banner_rows("reading-the-numbers", {"baseline_power_w": 1400.0, "baseline": "gb300"})
    assert rows == [("baseline", "gb300", "gb200"), ("baseline_power_w", "1,400", "unset: its rated TDP")]


def test_staging_unlinks_a_chapter_the_build_does_not_hold():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        'See the <a href="claims.html">claims</a> page and <a href="roofline.html">the roofline</a>; '
        '<a href="figures.html">figures</a> is a book page.')])
    pages.unlink_unbuilt(nb, {"reading-the-numbers", "roofline"})
    assert nb.cells[0].source == ('See the claims page and <a href="roofline.html">the roofline</a>; '
                                  '<a href="figures.html">figures</a> is a book page.')
