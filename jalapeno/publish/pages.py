"""The book's sources as a build stages them: the prose of ``book/``, the executed chapters (with a
banner on every page a scenario or changed parameters computed), their figures, and the pages generated
from the Jinja2 templates in ``templates/`` (figures, environment, how to cite, the changelog of
published numbers and this build's numbers against them, the data files' digests, the references: the seeds and every web page ``data/``
cites); the recorded numbers of each version; and the checks of a
rendered site (nothing loaded from the network, no checksum query string an earlier render decides)."""

from __future__ import annotations

import functools
import json
import platform
import re
import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

import jinja2
import nbformat
import polars as pl
import yaml

from .. import calibration, charts, display, measured, specs
from ..chapters.quantities import QUANTITIES, RECORD
from ..cache import installed_version, pins, sha256, write_atomic
from ..data import REPO_ROOT, claims_table, data_dir, model_constant, seed_citations, seed_figures, seeds_table
from ..display import formatted
from ..errors import BuildError, JalapenoError, shown
from . import params
from .execute import with_prose
from .scenarios import BOOK_DIR, Scenario, committed_notebook, display_path, notebook_names, notebook_path

GLUE_MIME = "application/papermill.record/text/markdown"

#: The placeholder in ``book/data.md`` that the table of the data files replaces.
DATA_FILES_MARKER = "<!-- jalapeno:data-files -->"
#: The placeholder in ``book/references.md`` that the generated references (:func:`references_table`) replace.
REFERENCES_MARKER = "<!-- jalapeno:references -->"
#: A web address in a data file (up to a delimiter of CSV or of the prose around it).
_URL = re.compile(r"""https?://[^\s,;"'<>()]+""")
#: The benchmark's repository in a ``source`` of ``measured/inferencemax.csv``: ``(owner/name)``.
_BENCHMARK_REPO = re.compile(r"\(([A-Za-z0-9-]+/[A-Za-z0-9_.-]+)\)")
#: Where the rows were collected: ``collected in owner/name@<commit> <folder>/run_<id>/...``.
_COLLECTED_IN = re.compile(r"collected in ([A-Za-z0-9-]+/[A-Za-z0-9_.-]+)@([0-9a-f]{40}) (\S+?)/run_")
#: A number the prose of ``book/data.md`` quotes, ``<!-- jalapeno:number NAME -->``: replaced by the text of
#: ``data_page_numbers()[NAME]`` (no result is typed into that page).
DATA_NUMBER = re.compile(r"<!-- jalapeno:number ([a-z0-9-]+) -->")
#: A chapter's glued number quoted by a prose page of ``book/`` (the landing page),
#: ``<!-- jalapeno:quote CHAPTER/KEY -->``: replaced by the text the built chapter glued under KEY.
CHAPTER_QUOTE = re.compile(r"<!-- jalapeno:quote ([a-z0-9-]+)/([A-Za-z0-9_.-]+) -->")
#: A block of prose that needs a chapter's numbers, ``<!-- jalapeno:if-built CHAPTER -->`` ...
#: ``<!-- jalapeno:end-if -->``: kept when the build ran CHAPTER, else replaced by :data:`NOT_BUILT`.
IF_BUILT = re.compile(r"<!-- jalapeno:if-built ([a-z0-9-]+) -->(.*?)<!-- jalapeno:end-if -->", re.S)
#: What stands in for an :data:`IF_BUILT` block whose chapter a partial build did not run.
NOT_BUILT = "*The {chapter} chapter was not built in this build, so its short answer is not shown here.*"
#: What opens an :data:`IF_BUILT` block whose chapter a scenario or rebuild left at its defaults.
AT_DEFAULTS = ("*This build left the {chapter} chapter at its default parameters: the numbers below are the "
               "default book's, not this build's.*\n\n")

TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
                               undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                               trim_blocks=True, lstrip_blocks=True)
#: A Markdown table cell: one line, whole (a reason is never cut), ``|`` escaped.
TEMPLATES.filters["cell"] = lambda text: " ".join(str(text).split()).replace("|", "\\|")
TEMPLATES.filters["bibtex_name"] = lambda name: "{" + name + "}"


def render(template: str, **context: object) -> str:
    """The text of ``templates/<template>`` with ``context`` (an undefined name is an error)."""
    return TEMPLATES.get_template(template).render(**context)


def version() -> str:
    """The book's version, from ``pyproject.toml``."""
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]


# ---- staging the book -------------------------------------------------------------------------------

@dataclass
class Staged:
    """What :func:`stage` put into the book: each figure (``name``, ``notebook``, ``caption``,
    ``command``) and the numbers each chapter's prose quotes (chapter -> key -> text)."""

    figures: list[dict[str, str]]
    numbers: dict[str, dict[str, str]]


def build_command(names: list[str], scenario: Scenario | None, overrides: dict[str, object],
                  out: Path | None = None, default_out: Path | None = None) -> str:
    """The command line that rebuilds ``names`` (all chapters if empty) the way this build did, into the
    folder ``out`` when it is not ``default_out`` (so running it never replaces another build; a chapter
    taken out of a larger build is given a folder of its own, :func:`chapter_out`)."""
    cmd = [".venv/bin/jalapeno", "build", *names]
    if scenario:
        cmd += ["--scenario", scenario.source]
    for key, value in sorted(overrides.items()):  # -p reads its value as YAML: a flow-style dump reads back
        cmd += ["-p", key, params.as_typed(value)]
    if out is not None and out != default_out:
        cmd += ["--out", display_path(out)]
    return " ".join(shlex.quote(c) for c in cmd)


def chapter_out(name: str, built: list[str], out: Path) -> Path:
    """Where the command that rebuilds chapter ``name`` alone writes, for a build of the chapters ``built``
    into ``out``: ``out`` itself when that build was the chapter alone, else the folder beside it named
    ``<out>-<name>`` (``build/html-agents``), since a one-chapter build into ``out`` would replace the
    other chapters there with it."""
    return out if built == [name] else out.with_name(f"{out.name}-{name}")


def stage(src: Path, figures_dir: Path, runs: dict[str, dict[str, object]], entries: dict[str, Path],
          scenario: Scenario | None, overrides: dict[str, object], out: Path, default_out: Path,
          measurements: dict[str, dict[str, str]] | None = None) -> Staged:
    """Write the book's sources into ``src`` and the figures' files into ``figures_dir``.

    ``runs`` maps each chosen notebook to the parameters it was given, ``entries`` to the folder that
    holds it executed (``notebook.ipynb``, ``figures/``). Raises BuildError when two notebooks write a
    figure of the same name."""
    shutil.copytree(BOOK_DIR, src, ignore=shutil.ignore_patterns("_build", "chapters", "published-numbers"))
    (src / "chapters").mkdir()
    figures: list[dict[str, str]] = []
    numbers: dict[str, dict[str, str]] = {}
    titles: dict[str, str] = {}
    changed = scenario is not None or any(runs.values()) or bool(measurements)  # measurements: page -> banner's
    title = f"Scenario: {scenario.name}" if scenario else "Rebuilt with changed parameters"
    title = "Rebuilt on your measurements" if measurements and not scenario and not any(runs.values()) else title
    for name, values in runs.items():
        nb = with_prose(nbformat.read(entries[name] / "notebook.ipynb", as_version=4),
                        committed_notebook(name), name)  # the prose as it is now
        fold_parameters(nb)  # before the prose's glossary links: a term's first use is in the page's reading
        quiet_one_liners(nb)
        unlink_unbuilt(nb, set(runs))
        stage_prose(nb, src / "glossary.md")  # glossary links and typeset formulas, in the staged copy only
        titles[name], numbers[name] = chapter_title(nb, name), glued(nb)
        defaults = params.declared(notebook_path(name))
        own = {k: v for k, v in overrides.items() if k in defaults}
        mine = (measurements or {}).get(name)
        command = build_command([name], scenario, own, chapter_out(name, list(runs), out), default_out) + (
            mine["args"] if mine else "")  # this chapter's page and figures, the way this build made them
        if changed:  # every page of a build other than the default book's, each saying what it was computed with
            text = (scenario.description if scenario else "This page was rebuilt with parameters other than the defaults."
                    if values else "Other chapters of this build were rebuilt with parameters other than the "
                    "defaults, so their numbers can differ from this page's.")
            first = next(c for c in nb.cells if c.cell_type == "markdown")
            first.source = insert_after_title(first.source, render(
                "banner.md", title=title, description=mine["description"] if mine and not scenario and not values else text,
                rows=banner_rows(name, values), measurements=mine, command=command))
        drawn: dict[str, dict[str, str]] = {}  # element id on the page -> the figure it draws
        for svg in sorted((entries[name] / "figures").glob("*.svg")):
            clash = next((f["notebook"] for f in figures if f["name"] == svg.stem), None)
            if clash:
                raise BuildError(f"figure name {svg.stem!r} is written by both {clash!r} and {name!r}")
            for suffix in FIGURE_FILES:
                shutil.copy2(svg.with_name(svg.stem + suffix), figures_dir / f"{svg.stem}{suffix}")
            figures.append({"name": svg.stem, "notebook": name, "caption": figure_caption(svg.read_text(), svg.stem),
                            "command": command})
            drawn[charts.spec_id(json.loads(svg.with_name(svg.stem + ".vl.json").read_text()))] = figures[-1]
        label_notebook_tables(nb)  # the staged copy's tables reflow on a phone (data-label on each cell)
        add_chart_data(nb, drawn)
        nbformat.write(nb, src / "chapters" / f"{name}.ipynb")
    if changed:
        intro = src / "intro.md"
        text = scenario.description if scenario else "These chapters were rebuilt with parameters other than the defaults."
        rows = sorted((f"{n}: {k}", v, d) for n, vals in runs.items() for k, v, d in banner_rows(n, vals))
        chosen = [] if len(runs) == len(notebook_names()) else list(runs)
        mine = (measurements or {}).get("intro")
        intro.write_text(insert_after_title(intro.read_text(), render(
            "banner.md", title=title, description=mine["description"] if mine and not scenario and not rows else text,
            rows=rows, measurements=mine,
            command=build_command(chosen, scenario, overrides, out, default_out) + (mine["args"] if mine else ""))))
    at_defaults = tuple(n for n, v in runs.items() if not v and not (measurements or {}).get(n, {}).get("refit")
                        ) if changed else ()  # a chapter run on refitted constants is not at the defaults
    (src / "intro.md").write_text(quote_chapters((src / "intro.md").read_text(), numbers, "book/intro.md", at_defaults))
    (src / "figures.md").write_text(figures_page(figures, titles, scenario))
    (src / "environment.md").write_text(environment_page())
    (src / "cite.md").write_text(cite_page())
    (src / "changelog.md").write_text(changelog_page())
    (src / "this-build.md").write_text(this_build_page(numbers, scenario, changed))
    data_md = src / "data.md"
    data_md.write_text(data_page(data_md.read_text()))
    references_md = src / "references.md"
    references_md.write_text(references_page(references_md.read_text()))
    typeset_pages(src)
    keep_chapters(src / "_toc.yml", list(runs))
    (src / "_static").mkdir(exist_ok=True)
    (src / "_static" / "vega-bundle.js").write_text(runtime_script())
    return Staged(figures, numbers)


def banner_rows(name: str, values: dict[str, object]) -> list[tuple[str, str, str]]:
    """The rows of a banner for notebook ``name`` run with ``values``: each parameter given, in its
    declaration's order, with this build's value and its default as a reader writes them
    (:meth:`jalapeno.chapters.Parameter.shown`: ``unset: its rated TDP`` for a ``None``)."""
    return [(p.name, p.shown(values[p.name]), p.shown(p.default)) for p in params.declaration(notebook_path(name))
            if p.name in values]


def keep_chapters(toc_path: Path, chosen: list[str]) -> None:
    """Rewrite the table of contents ``toc_path`` to list only the chapters ``chosen`` (and every page
    that is not a chapter); a part left without chapters is dropped."""
    toc = yaml.safe_load(toc_path.read_text())
    keep = {f"chapters/{n}" for n in chosen}
    for part in toc.get("parts", [toc]):
        part["chapters"] = [c for c in part.get("chapters", [])
                            if not c["file"].startswith("chapters/") or c["file"] in keep]
    if "parts" in toc:
        toc["parts"] = [p for p in toc["parts"] if p["chapters"]]
    toc_path.write_text(yaml.safe_dump(toc, sort_keys=False))


def insert_after_title(text: str, block: str) -> str:
    """``text`` (Markdown) with ``block`` after its first ``# `` title (at its start if it has none)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join(lines[:i + 1] + ["", block] + lines[i + 1:]) + "\n"
    return block + "\n" + text


def chapter_title(nb: nbformat.NotebookNode, default: str) -> str:
    """The first ``# `` title of the notebook's markdown cells, else ``default``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return default


def glued(nb: nbformat.NotebookNode) -> dict[str, str]:
    """The values a notebook glued for its prose: key -> the text the page shows."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name and GLUE_MIME in o.get("data", {}):
                out[name] = str(o["data"][GLUE_MIME])
    return dict(sorted(out.items()))


def quantities(nb: nbformat.NotebookNode) -> dict[str, tuple[str, str | None]]:
    """The quantities a notebook's numbers show (:func:`jalapeno.publish.notebook.glue_all`'s record):
    key -> (quantity, variant or None); empty when it names none."""
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("metadata", {}).get("scrapbook", {}).get("name") == RECORD:
                text = next(v for k, v in o["data"].items() if k.endswith("text/plain"))
                return {k: (q, v) for k, (q, v) in json.loads(text).items()}
    return {}


#: A number as the display rule prints it at the start of a quoted text: sign, thousands separators,
#: decimals (``44,960``, ``1.90``, ``−0.3``).
_PRINTED = re.compile(r"[-\u2212]?\d[\d,]*(\.\d+)?")


def printed_interval(text: str) -> tuple[float, float] | None:
    """The values a quoted ``text`` that starts with a number stands for, by its printed rounding
    (``1.90`` -> [1.895, 1.905], ``44,960`` -> [44,959.5, 44,960.5]); None for a text that is not a number."""
    m = _PRINTED.fullmatch(text.strip())
    if not m:
        return None
    digits = m.group(0).replace(",", "").replace("\u2212", "-")
    half = 0.5 * 10.0 ** -len(m.group(1)[1:]) if m.group(1) else 0.5
    return float(digits) - half, float(digits) + half


def quantity_conflicts(shown: list[tuple[str, str, str, str | None, str]]) -> list[str]:
    """The quantities shown with values their printed rounding cannot reconcile: ``shown`` holds (chapter,
    key, quantity, variant, text) of every quote that names a quantity; within one quantity and variant,
    the intervals of :func:`printed_interval` must share a point (a text that is not a number must equal
    every other). Returns one line per conflict, naming each chapter, key and text; empty when none."""
    groups: dict[tuple[str, str | None], list[tuple[str, str, str]]] = {}
    for chapter, key, q, variant, text in shown:
        groups.setdefault((q, variant), []).append((chapter, key, text))
    out = []
    for (q, variant), quotes in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        intervals = [printed_interval(t) for _, _, t in quotes]
        if all(iv is not None for iv in intervals):
            ok = max(lo for lo, _ in intervals) <= min(hi for _, hi in intervals) * (1 + 1e-12)
        else:
            ok = len({t for _, _, t in quotes}) == 1
        if not ok:
            where = "; ".join(f"{c}/{k} = {t}" for c, k, t in quotes)
            out.append(f"quantity {q!r}{f' ({variant})' if variant else ''} is shown with different values: {where}")
    return out


#: The files of a figure beside the pages (``figures/<name><suffix>``), as :func:`jalapeno.charts.export`
#: writes them and the build adds the PNG.
FIGURE_FILES = (".svg", ".png", ".csv", ".vl.json")

_CHART_DIV = re.compile(r'<div id="(fig-[0-9a-f]{12})" class="jalapeno-chart"></div>')


def counterpart(name: str, built: set[str], titles: dict[str, str]) -> dict[str, object]:
    """One counterpart of a seed's figure on the Figures page: a figure of this build (``name`` in
    ``built``: linked to its entry) or a chapter's section (``chapter#anchor``, for a table the seed prints:
    linked to the section of the built chapter, labelled by its heading's words); ``built`` False when
    this build lacks it."""
    chapter, _, anchor = name.partition("#")
    if not anchor:
        return {"name": name, "built": name in built, "href": f"#figure-{name}", "label": name}
    words = anchor.replace("-", " ")
    return {"name": name, "built": chapter in titles, "href": f"chapters/{chapter}.html#{anchor}",
            "label": f"{titles.get(chapter, chapter)}, the section {words[0].upper() + words[1:]}"}


def figures_page(figures: list[dict[str, str]], titles: dict[str, str], scenario: Scenario | None) -> str:
    """The Figures page (template ``figures.md``): first the figures the seeds describe
    (:func:`jalapeno.data.seed_figures`, each with its seeds' citations and links to the figures of this
    build that answer it), then every figure of this build (``figures``: ``name``, ``notebook``,
    ``caption``, ``command``; ``titles``: chapter -> title) with the seeds' figures it answers."""
    cites = seed_citations()
    built = {f["name"] for f in figures}
    rows = [{"id": r["figure"].upper(), "cited": "; ".join(cites[x] for x in r["seeds"].split(";")),
             "describes": r["describes"], "quote": r["quote"], "gap": r["gap"],
             "counterparts": [counterpart(c, built, titles) for c in (r["counterparts"] or "").split(";") if c]}
            for r in seed_figures().iter_rows(named=True)]
    answers = {f["name"]: [r["id"] for r in rows if any(c["name"] == f["name"] for c in r["counterparts"])] for f in figures}
    return render("figures.md", figures=[{**f, "seed_figures": answers[f["name"]]} for f in figures], titles=titles,
                  scenario=scenario, seed_figures=rows)


#: A link of the prose to another chapter's page, as the chapters write it in HTML.
_CHAPTER_LINK = re.compile(r'<a href="([a-z0-9-]+)\.html">(.*?)</a>', re.S)


def unlink_unbuilt(nb: nbformat.NotebookNode, built: set[str]) -> None:
    """In the staged chapter ``nb``, a link to a chapter this build does not hold (a build of some
    chapters only) becomes its text, so no page links to a page that is not there."""
    chapters = set(notebook_names())
    for c in nb.cells:
        if c.cell_type == "markdown" and "<a href=" in c.source:
            c.source = _CHAPTER_LINK.sub(lambda m: m.group(0) if m.group(1) in built or m.group(1) not in chapters
                                         else m.group(2), c.source)


#: A code cell's line that only shows a result: a table or a figure (jalapeno.publish.notebook).
_SHOW_LINE = re.compile(r"(table|figure|display)\(.*\)")


def quiet_one_liners(nb: nbformat.NotebookNode) -> None:
    """In the staged chapter ``nb``, a code cell that only shows its results (each line a ``table(...)``,
    ``figure(...)`` or ``display(...)`` call) loses its code toggle: its ``hide-input`` becomes
    ``remove-input``, so a toggle stays only where the code says something (the setup cell: how to
    compute the chapter from Python)."""
    for c in nb.cells:
        tags = c.get("metadata", {}).get("tags", [])
        lines = [line for line in c.source.splitlines() if line.strip()]
        if c.cell_type == "code" and "hide-input" in tags and lines and all(_SHOW_LINE.fullmatch(x) for x in lines):
            c.metadata["tags"] = ["remove-input" if x == "hide-input" else x for x in tags]


def fold_parameters(nb: nbformat.NotebookNode) -> None:
    """In the staged chapter ``nb``, the parameter table its setup cell shows
    (:func:`jalapeno.publish.notebook.setup`) and the paragraph before it that defines the parameters
    (a markdown cell opening ``Parameters:``, rendered as CommonMark) folded into one
    ``<details class="jalapeno-parameters">`` whose summary says how many values are changed (open when
    some are), so that a chapter opens with its results. A notebook without that table is left as it is."""
    from markdown_it import MarkdownIt

    at = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "setup(globals()" in c.source), None)
    if at is None:
        return
    out = next((o for o in nb.cells[at].get("outputs", []) if "jalapeno-table" in "".join(o.get("data", {}).get("text/html", ""))), None)
    if out is None:
        return
    table = "".join(out["data"]["text/html"])
    words = next((i for i in range(at) if nb.cells[i].cell_type == "markdown" and nb.cells[i].source.startswith("Parameters:")), None)
    intro = "" if words is None else MarkdownIt("commonmark").render(nb.cells[words].source)
    changed = len(re.findall(r">changed</td>", table))
    summary = "This chapter's parameters: " + (f"{changed} changed" if changed else "all at their defaults")
    out["data"]["text/html"] = (f'<details class="jalapeno-parameters"{" open" if changed else ""}><summary>{summary}</summary>'
                                f"{intro}{table}</details>")
    if words is not None:
        del nb.cells[words]


def add_chart_data(nb: nbformat.NotebookNode, drawn: dict[str, dict[str, str]]) -> None:
    """Under each chart of the staged chapter ``nb`` (its element id a key of ``drawn``: the figure's
    ``name``, ``caption`` and regenerating ``command``), the chart's static SVG for a page read without
    scripts (``<noscript>``) and a line linking its data (CSV), its image and spec, with the command that
    regenerates them (``chart-data.html``). Only here, at staging: in a notebook's output the SVG's text
    would depend on the fonts the executing machine has. Raises BuildError naming a chart no exported
    figure draws (a chart shown other than by :func:`jalapeno.publish.notebook.figure` has no files to link)."""
    for data, html in html_outputs(nb):
        for element in _CHART_DIV.findall(html):
            if element not in drawn:
                raise BuildError(f"chart {element} has no exported figure: show it with "
                                 "jalapeno.publish.notebook.figure, which writes its files")
        data["text/html"] = html + "".join(render("chart-data.html", figure=drawn[e]) for e in _CHART_DIV.findall(html))


def html_outputs(nb: nbformat.NotebookNode):
    """``(data, html)`` of every output of ``nb`` that has an HTML form: its ``data`` dict (to write a new
    ``text/html`` into) and that HTML as one text (a stored list of lines joined)."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html")
            if html:
                yield out["data"], "".join(html) if isinstance(html, list) else html


_SVG_TITLE = re.compile(r'role-title-text"[^>]*>\s*<text[^>]*>(.*?)</text>', re.S)


def figure_caption(svg: str, default: str) -> str:
    """A figure's caption: the title drawn in its SVG (vl-convert), its lines joined by spaces (a title
    breaks between words), else ``default``. Of a concatenated or layered chart's titles, the figure's own
    (vl-convert draws it last, after its panels'), never a panel's."""
    import html

    titles = _SVG_TITLE.findall(svg)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", titles[-1])).split()) if titles else default


def runtime_script() -> str:
    """The chart runtime as the book serves it: the vl-convert bundle inside a function, so that its
    top-level names (one is ``_``) cannot clash with Sphinx's scripts; it still sets
    ``window.vegaEmbed``, ``window.vega`` and ``window.vegaLite``."""
    bundle = charts.runtime_bundle()
    return bundle if bundle.startswith("(function(){") else "(function(){\n" + bundle + "\n})();\n"


# ---- the generated pages ----------------------------------------------------------------------------

def environment_page() -> str:
    """The environment page: each pinned package of ``pyproject.toml`` with the version installed."""
    import vl_convert as vlc

    packages = [{"name": name, "extra": extra, "pinned": pinned, "installed": installed_version(name),
                 "matches": installed_version(name) == pinned}
                for extra, group in pins().items() for name, pinned in group]
    return render("environment.md", version=version(), python=platform.python_version(), packages=packages,
                  vega=vlc.get_vega_version(), vega_lite=", ".join(vlc.get_vegalite_versions()[-1:]),
                  vega_embed=vlc.get_vega_embed_version())


def cite_page() -> str:
    """The how-to-cite page (with BibTeX), from ``CITATION.cff``."""
    cff = yaml.safe_load((REPO_ROOT / "CITATION.cff").read_text())
    authors = [a.get("name") or " ".join(x for x in (a.get("given-names"), a.get("family-names")) if x)
               for a in cff.get("authors", [])]
    return render("cite.md", cff={"message": "", "url": None, "repository-code": None, "date-released": None, **cff}, authors=authors)


def data_page_numbers() -> dict[str, str]:
    """The numbers the prose of ``book/data.md`` quotes, by name, as the display rule writes them
    (:func:`jalapeno.display.formatted`), computed from ``data/``: ``calibration-rows`` (measured rows
    without speculative decoding, the rows the calibration reads), ``queue-bound-rows`` (those of them
    that are queue-bound, ``queue_bound`` of :func:`jalapeno.measured.points`), ``queue-bound-occupancy``
    (the threshold, ``queue_bound_occupancy`` of ``model_constants.csv``), ``queue-bound-min-occupancy``,
    ``queue-bound-mean-ttft-s`` and ``queue-bound-max-ttft-s`` (mean TTFT, s: their mean and largest),
    ``queue-bound-hardware`` (their chips' names) and ``queue-bound-disaggregated`` (how many of them
    are disaggregated: ``all`` when every one is)."""
    pts = measured.points(spec_decoding="none")
    queued = pts.filter(pl.col("queue_bound"))
    numbers = {"calibration-rows": formatted(pts.height, "{:,}"), "queue-bound-rows": formatted(queued.height, "{:,}"),
               "queue-bound-occupancy": formatted(model_constant("queue_bound_occupancy"), "{:g}")}
    if queued.is_empty():
        return {**numbers, "queue-bound-min-occupancy": "none", "queue-bound-mean-ttft-s": "none",
                "queue-bound-max-ttft-s": "none", "queue-bound-hardware": "none", "queue-bound-disaggregated": "0"}
    return {**numbers, "queue-bound-min-occupancy": formatted(queued["occupancy"].min(), "{:.2f}"),
            "queue-bound-mean-ttft-s": formatted(queued["mean_ttft"].mean(), "{:.0f}"),
            "queue-bound-max-ttft-s": formatted(queued["mean_ttft"].max(), "{:.0f}"),
            "queue-bound-hardware": ", ".join(specs.chip(calibration.chip_of(hw)).display_name
                                              for hw in sorted(queued["hw"].unique())),
            "queue-bound-disaggregated": "all" if bool(queued["disagg"].all())
            else formatted(int(queued["disagg"].sum()), "{:,}")}


def data_page(text: str) -> str:
    """``book/data.md``'s ``text`` with the table of the data files (:func:`data_files_table`) in place of
    :data:`DATA_FILES_MARKER` and each number marker (:data:`DATA_NUMBER`) replaced by its text from
    :func:`data_page_numbers`. BuildError naming a marker that names no number."""
    numbers = data_page_numbers()
    unknown = sorted({m for m in DATA_NUMBER.findall(text) if m not in numbers})
    if unknown:
        raise BuildError(f"book/data.md quotes unknown numbers {', '.join(unknown)}; known: {', '.join(numbers)}")
    text = DATA_NUMBER.sub(lambda m: numbers[m.group(1)], text)
    return text.replace(DATA_FILES_MARKER, data_files_table())


def references_page(text: str) -> str:
    """``book/references.md``'s ``text`` with :data:`REFERENCES_MARKER` replaced by
    :func:`references_table`. BuildError when the marker is missing."""
    if REFERENCES_MARKER not in text:
        raise BuildError(f"book/references.md lacks the marker {REFERENCES_MARKER}")
    return text.replace(REFERENCES_MARKER, references_table())


def _urls(text: str) -> list[str]:
    """The web addresses in ``text``, in order, once each (a trailing full stop dropped)."""
    return list(dict.fromkeys(u.rstrip(".") for u in _URL.findall(text)))


def references_table() -> str:
    """The generated references (template ``references.md``): the seeds of ``seeds.csv`` (file name,
    short citation, titles, outlet, date; *not stated* for an empty date); the benchmark's repositories as
    the ``source`` column of ``measured/inferencemax.csv`` names them, with its rows and runs; each chip of
    ``chips.csv`` with the web pages its row and its ``chip_specs.csv`` rows cite; and every other web page
    a CSV file of ``data/`` cites, with those files. No address is typed here: each is read from the data.
    BuildError when the measured sources name no benchmark repository or collection."""
    root = data_dir()
    seeds = [{**r, "date": str(r["date"]) if r["date"] else "not stated"}
             for r in seeds_table().iter_rows(named=True)]
    runs = pl.read_csv(root / "measured" / "inferencemax.csv", columns=["run_id", "source"], infer_schema_length=0)
    sources = runs["source"].unique(maintain_order=True).to_list()
    bench = list(dict.fromkeys(m for s in sources for m in _BENCHMARK_REPO.findall(s)))
    collected = list(dict.fromkeys(m for s in sources for m in _COLLECTED_IN.findall(s)))
    if not bench or not collected:
        raise BuildError("data/measured/inferencemax.csv: its source column names no benchmark repository "
                         f"'(owner/name)' or no 'collected in owner/name@<commit> <folder>/run_'; e.g. {shown(sources[0] if sources else '')}")
    repos = [{"what": "the benchmark (InferenceX, formerly InferenceMAX)", "url": f"https://github.com/{r}", "label": r}
             for r in bench]
    repos += [{"what": "the data repository the rows were collected from, at the commit read",
               "url": f"https://github.com/{r}/tree/{commit}/{folder}", "label": f"{r}@{commit[:12]} {folder}"}
              for r, commit, folder in collected]
    benchmark = {"rows": runs.height, "runs": runs["run_id"].n_unique(), "repos": repos}
    chips = pl.read_csv(root / "chips.csv", infer_schema_length=0)
    specs_rows = pl.read_csv(root / "chip_specs.csv", infer_schema_length=0)
    listed: set[str] = set()
    chip_refs = []
    for r in chips.iter_rows(named=True):
        text = " ".join(v for v in r.values() if v) + " " + " ".join(
            v for row in specs_rows.filter(pl.col("chip") == r["chip"]).iter_rows() for v in row if v)
        urls = _urls(text)
        listed.update(urls)
        if urls:
            chip_refs.append({"name": r["display_name"], "urls": urls})
    cited_in: dict[str, list[str]] = {}
    for p in sorted(root.rglob("*.csv")):
        for u in _urls(p.read_text()):
            cited_in.setdefault(u, []).append(p.relative_to(root).as_posix())
    others = [{"url": u, "files": files} for u, files in sorted(cited_in.items()) if u not in listed]
    return render("references.md", seeds=seeds, benchmark=benchmark, chips=chip_refs, others=others)


def quote_chapters(text: str, numbers: dict[str, dict[str, str]], page: str, at_defaults: tuple[str, ...] = ()) -> str:
    """The prose ``text`` of ``page`` (named in errors) with each :data:`IF_BUILT` block kept (without its
    markers) when ``numbers`` holds its chapter, else replaced by :data:`NOT_BUILT`, and then each
    :data:`CHAPTER_QUOTE` marker replaced by the text its chapter glued under its key. ``numbers``: chapter
    -> key -> text, the built chapters' glued numbers (:attr:`Staged.numbers`, what ``numbers.json``
    holds). A block of a chapter in ``at_defaults`` (a chapter that a scenario or rebuild left at its defaults)
    opens with :data:`AT_DEFAULTS`, so its numbers are not read as the scenario's. BuildError naming a block or quote of a chapter ``book/_toc.yml`` does not list, a quote
    outside a block of a chapter this build did not run, and an unknown key (with the chapter's keys)."""
    # the chapters of the table of contents, not scenarios.notebook_names (which keeps only the notebooks a
    # folder holds: a build of a scratch notebooks folder still has the book's whole landing page)
    toc = yaml.safe_load((BOOK_DIR / "_toc.yml").read_text())
    chapters = [c["file"].removeprefix("chapters/") for part in toc.get("parts", [toc]) for c in part.get("chapters", [])
                if c["file"].startswith("chapters/")]

    def block(m: re.Match) -> str:
        chapter = m.group(1)
        if chapter not in chapters:
            raise BuildError(f"{page} has a block for chapter {chapter!r}, which the book does not have; "
                             f"chapters: {', '.join(chapters)}")
        if chapter not in numbers:
            return NOT_BUILT.format(chapter=chapter)
        return (AT_DEFAULTS.format(chapter=chapter) if chapter in at_defaults else "") + m.group(2)

    text = IF_BUILT.sub(block, text)
    problems = []
    for chapter, key in dict.fromkeys(CHAPTER_QUOTE.findall(text)):
        if chapter not in chapters:
            problems.append(f"{chapter}/{key}: the book has no chapter {chapter!r} (chapters: {', '.join(chapters)})")
        elif chapter not in numbers:
            problems.append(f"{chapter}/{key}: this build did not run {chapter!r}; quote it inside "
                            f"<!-- jalapeno:if-built {chapter} --> ... <!-- jalapeno:end-if -->")
        elif key not in numbers[chapter]:
            problems.append(f"{chapter}/{key}: unknown key {key!r}; {chapter}'s keys: {', '.join(sorted(numbers[chapter]))}")
    if problems:
        raise BuildError(f"{page} quotes numbers it cannot have: " + "; ".join(problems))
    return CHAPTER_QUOTE.sub(lambda m: numbers[m.group(1)][m.group(2)], text)


def data_files_table() -> str:
    """The table of the data files (rows, digest), each a download from the built site's ``data/``."""
    root = data_dir()
    files = [{"path": p.relative_to(root).as_posix(), "rows": max(0, len(p.read_text().splitlines()) - 1),
              "digest": sha256(p)[:16]} for p in sorted(root.rglob("*.csv"))]
    return render("data-files.md", files=files)


# ---- the published numbers --------------------------------------------------------------------------

def _version_key(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"[.\-]", v))


def published_numbers() -> dict[str, dict[str, dict[str, str]]]:
    """The recorded numbers of each published version (``book/published-numbers/<version>.json``),
    oldest first: version -> chapter -> key -> text."""
    files = sorted((BOOK_DIR / "published-numbers").glob("*.json"), key=lambda p: _version_key(p.stem))
    return {p.stem: json.loads(p.read_text()) for p in files}


def diff_numbers(old: dict[str, dict[str, str]], new: dict[str, dict[str, str]]) -> list[tuple[str, str, str, str]]:
    """``(chapter, key, before, after)`` of every number that differs (``(new)`` / ``(removed)``)."""
    rows = []
    for chapter in sorted(set(old) | set(new)):
        a, b = old.get(chapter, {}), new.get(chapter, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                rows.append((chapter, key, a.get(key, "(new)"), b.get(key, "(removed)")))
    return rows


def reasons(version: str) -> dict[str, dict[str, str]]:
    """Why the numbers of ``version`` moved from the version before it: chapter -> key -> reason, from
    ``book/published-numbers/<version>.why.yml`` (empty when the file does not exist). A key ``"*"``
    gives the reason of every other change of that chapter."""
    path = BOOK_DIR / "published-numbers" / f"{version}.why.yml"
    return yaml.safe_load(path.read_text()) or {} if path.exists() else {}


def why(reasons: dict[str, dict[str, str]], chapter: str, key: str) -> str:
    """The reason :func:`reasons` gives for number ``key`` of ``chapter`` ("" when none)."""
    mine = reasons.get(chapter) or {}
    return str(mine.get(key) or mine.get("*") or "")


def changelog_page() -> str:
    """The changelog page: each recorded version against the one before, newest first. It is the same
    for every build of a version (this build's own numbers are :func:`this_build_page`'s), so a rerun's
    render does not read its 400 kB again."""
    versions, shown = published_numbers(), []
    labels, titles = number_labels(), chapter_titles()  # grouped by chapter and quantity, in readers' words
    names = list(versions)
    for i, name in reversed(list(enumerate(names))):
        entry = {"name": name, "total": sum(len(c) for c in versions[name].values()),
                 "chapters": len(versions[name]), "first": i == 0}
        if i:
            told = reasons(name)
            diff = diff_numbers(versions[names[i - 1]], versions[name])
            rows = [{"chapter": c, "key": k, "before": a, "after": b, "why": why(told, c, k)} for c, k, a, b in diff]
            entry.update(before=names[i - 1], by_chapter=changes_by_chapter(diff, told, labels, titles),
                         added=[r for r in rows if r["before"] == "(new)"],
                         removed=[r for r in rows if r["after"] == "(removed)"],
                         moved=[r for r in rows if "(new)" != r["before"] and r["after"] != "(removed)"])
        shown.append(entry)
    return render("changelog.md", versions=shown)


def this_build_page(current: dict[str, dict[str, str]], scenario: Scenario | None, changed: bool) -> str:
    """The page of this build's ``current`` numbers (chapter -> key -> text) against the latest recorded
    version, grouped as the changelog groups them, each sentence read with this build's numbers;
    ``scenario`` and ``changed`` (parameters other than the defaults) say how the build was computed."""
    versions = published_numbers()
    this_build = None
    if versions:
        latest = list(versions)[-1]
        how = (f"under the scenario `{scenario.name}`" if scenario else
               "with changed parameters" if changed else "with the default parameters")
        diff = diff_numbers({c: versions[latest].get(c, {}) for c in current}, current)
        labels, titles = (number_labels(current), chapter_titles()) if diff else ({}, {})  # none to label: not read
        this_build = {"how": how, "latest": latest, "by_chapter": changes_by_chapter(diff, {}, labels, titles),
                      "rows": [{"chapter": c, "key": k, "before": a, "after": b} for c, k, a, b in diff]}
    return render("this-build.md", this_build=this_build)


def committed_numbers() -> dict[str, dict[str, str]]:
    """The numbers the committed notebooks (executed with their defaults, as nbval keeps them) glue
    into their prose: chapter -> key -> text."""
    return {name: glued(committed_notebook(name)) for name in notebook_names()}


def record_numbers(version_name: str | None = None, force: bool = False) -> Path:
    """Record the numbers of the committed notebooks as those of ``version_name`` (default: the version
    in ``pyproject.toml``) in ``book/published-numbers/<version>.json``, which the changelog page reads.
    A recorded version is not overwritten with other numbers unless ``force`` (JalapenoError)."""
    version_name = version_name or version()
    target = BOOK_DIR / "published-numbers" / f"{version_name}.json"
    text = json.dumps(committed_numbers(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if target.exists() and target.read_text() != text and not force:
        raise JalapenoError(f"{display_path(target)} already records other numbers for version {version_name}; "
                            "bump the version in pyproject.toml and CITATION.cff, or pass --force")
    write_atomic(target, text, mode=0o644)
    return target


# ---- checks of the rendered site --------------------------------------------------------------------

_EXTERNAL = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["'](?:https?:)?//""", re.I)


def check_offline(html_dir: Path) -> None:
    """Raise BuildError if a page loads a script, stylesheet, image or frame from the network."""
    for page in sorted(html_dir.rglob("*.html")):
        for line_no, line in enumerate(page.read_text(errors="replace").splitlines(), 1):
            m = _EXTERNAL.search(line)
            if m and "rel=\"canonical\"" not in line:
                raise BuildError(f"{page.relative_to(html_dir)}:{line_no} loads from the network: {line.strip()[:200]}")


#: Sphinx's cache-busting query string on the book's own assets (``_static/x.css?v=1a2b3c4d``): added
#: only once the file is in the output folder, so an incremental render has it and a first one not.
_CACHE_BUSTING = re.compile(r"""((?:src|href)=["'][^"'?#]*_static/[^"'?#]+)\?v=[0-9a-f]+(?=["'])""")


def strip_cache_busting(html_dir: Path) -> None:
    """Remove the ``?v=<checksum>`` query strings of links to ``_static/`` from every page under
    ``html_dir``, so that the same inputs give the same files whatever an earlier render left."""
    for page in sorted(html_dir.rglob("*.html")):
        text = page.read_text()
        stripped = _CACHE_BUSTING.sub(r"\1", text)
        if stripped != text:
            page.write_text(stripped)


# ---- the glossary's links and typeset formulas (staging) ---------------------------------------------

#: An entry of ``book/glossary.md``: its MyST target ``(glossary-<slug>)=`` and, on the next line, the
#: comment ``% terms: A, B`` that lists the words linked to it (the first is the entry's name).
_GLOSSARY_ENTRY = re.compile(r"^\((glossary-[a-z0-9-]+)\)=[ \t]*\n%[ \t]*terms:[ \t]*(.+?)[ \t]*$", re.M)
#: Lines whose words never link: headings, fences of code and directives, directive options, targets and
#: comments.
_PROSE_LINE_PROTECTED = r"^[ \t]*(?:#{1,6}[ \t]|:{3,}|`{3,}|~{3,}|%|\([^)\n]*\)=[ \t]*$|:[\w-]+:)[^\n]*$"
#: Pieces of Markdown whose words never link and whose dollars are not math: HTML comments, fenced code
#: blocks, code spans (a role's too: ``{glue:md}`key```).
_PROSE_COMMENT = r"<!--[\s\S]*?-->"
_PROSE_FENCED = r"^[ \t]*(?P<fence>`{3,}|~{3,})[^\n]*\n[\s\S]*?^[ \t]*(?P=fence)[ \t]*$"
_PROSE_CODE = r"(?:\{[^{}\s`]+\})?(?P<ticks>`+)[\s\S]+?(?<!`)(?P=ticks)(?!`)"
#: Pieces whose words never link: links and images, autolinks and HTML tags, bare web addresses, substitutions.
_PROSE_INLINE_PROTECTED = (r"!?\[[^\]\n]*\]\([^)\n]*\)", r"!?\[[^\]\n]*\]\[[^\]\n]*\]", r"<[^<>\n]+>",
                           r"https?://\S+", r"\{\{[\s\S]*?\}\}")
#: Math as MyST's ``dollarmath`` reads it: ``$$...$$``, or ``$...$`` opened before a non-space, closed
#: after one and not followed by a digit.
_MATH = r"\$\$[\s\S]+?\$\$|\$(?=[^\s$])[^$\n]*?(?<=[^\s$\\])\$(?!\d)"


def _prose_pieces(text: str, protect: str) -> list[tuple[bool, str]]:
    """``text`` cut into ``(free, piece)`` pieces, in order: ``free`` is False for a match of ``protect``
    (a regex read with ``re.M``), True for the text between them."""
    pieces, at = [], 0
    for m in re.finditer(protect, text, re.M):
        if m.start() > at:
            pieces.append((True, text[at:m.start()]))
        pieces.append((False, m.group(0)))
        at = m.end()
    if at < len(text):
        pieces.append((True, text[at:]))
    return pieces


def glossary_terms(text: str) -> dict[str, str]:
    """The words that link to the glossary, from the text of ``book/glossary.md``: term -> the entry's
    target (``glossary-tpot``), from each target line and the ``% terms: A, B`` comment under it.
    Raises BuildError when a term is listed by two entries."""
    terms: dict[str, str] = {}
    for m in _GLOSSARY_ENTRY.finditer(text):
        for term in (t.strip() for t in m.group(2).split(",")):
            if term in terms and terms[term] != m.group(1):
                raise BuildError(f"book/glossary.md lists {term!r} under both {terms[term]!r} and {m.group(1)!r}")
            if term:
                terms[term] = m.group(1)
    return terms


def link_glossary(texts: list[str], terms: dict[str, str]) -> list[str]:
    """The Markdown ``texts`` (a chapter's cells, in order) with the first use of each glossary entry
    linked to it (``{ref}`TPOT <glossary-tpot>```): whole words only (``TP`` never inside ``TPOT``), the
    longest term first (``E2E latency`` before ``E2E``); a term written in lower case also matches with a
    capital first letter. Headings, fence and option lines of directives, targets, comments, code, roles,
    links, HTML and math are left as they are. ``terms``: term -> target (:func:`glossary_terms`)."""
    if not terms:
        return list(texts)
    variants: dict[str, str] = {}
    for term, target in terms.items():
        variants[term] = target
        if term == term.lower():
            variants.setdefault(term[0].upper() + term[1:], target)
    words = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(t) for t in sorted(variants, key=lambda t: (-len(t), t)))
                       + r")(?!\w)")
    protect = "|".join((_PROSE_COMMENT, _PROSE_FENCED, _PROSE_LINE_PROTECTED, _PROSE_CODE, *_PROSE_INLINE_PROTECTED,
                        _MATH))
    linked: set[str] = set()

    def link(m: re.Match) -> str:
        target = variants[m.group(0)]
        if target in linked:
            return m.group(0)
        linked.add(target)
        return f"{{ref}}`{m.group(0)} <{target}>`"

    return ["".join(words.sub(link, piece) if free else piece for free, piece in _prose_pieces(text, protect))
            for text in texts]


#: Characters a Markdown parser would read in the text of a MathML element, as character references.
_MATHML_TEXT_ESCAPES = {c: f"&#x{ord(c):05X};" for c in "[]*_`\\$~|"}


#: A slash as TeX sets ``a/b``, without the space of an infix operator round it.
_MATHML_SLASH = '<mo lspace="0" rspace="0">&#x0002F;</mo>'


def typeset_math(text: str) -> str:
    """``text`` (MyST Markdown) with every formula outside code, ``$...$`` inline and ``$$...$$`` displayed,
    replaced by its MathML (``latex2mathml``), which the browser typesets: no MathJax, nothing from the
    network. A displayed formula alone on its lines becomes a ``<div class="jalapeno-math">`` block.
    Raises BuildError for a formula ``latex2mathml`` cannot read."""
    from latex2mathml.converter import convert

    protect = "|".join((_PROSE_COMMENT, _PROSE_FENCED, _PROSE_CODE))
    out, offset = [], 0
    for free, piece in _prose_pieces(text, protect):
        start, offset = offset, offset + len(piece)
        if not free:
            out.append(piece)
            continue
        at = 0
        for m in re.finditer(_MATH, piece):
            display_ = m.group(0).startswith("$$")
            latex = m.group(0)[2:-2] if display_ else m.group(0)[1:-1]
            try:
                mathml = convert(latex.strip(), display="block" if display_ else "inline")
            except Exception as e:  # latex2mathml raises its own exceptions and plain ones
                detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                raise BuildError(f"cannot typeset the formula {m.group(0)[:80]!r}: latex2mathml raised {detail}") from None
            mathml = re.sub(r">([^<]+)<", lambda t: ">" + "".join(_MATHML_TEXT_ESCAPES.get(c, c) for c in t.group(1)) + "<",
                            mathml)
            mathml = mathml.replace("<mo>&#x0002F;</mo>", _MATHML_SLASH)
            before, after = text[:start + m.start()], text[start + m.end():]
            alone = before.rsplit("\n", 1)[-1].strip() == "" and after.split("\n", 1)[0].strip() == ""
            out.append(piece[at:m.start()])
            out.append(f'<div class="jalapeno-math">{mathml}</div>' if display_ and alone else mathml)
            at = m.end()
        out.append(piece[at:])
    return "".join(out)


def stage_prose(nb: nbformat.NotebookNode, glossary: Path) -> None:
    """Link the first use of each term of the glossary page ``glossary`` (:func:`link_glossary`) and
    typeset the formulas (:func:`typeset_math`) in the markdown cells of the staged notebook ``nb``, in
    place; the committed notebook is not changed."""
    cells = [c for c in nb.cells if c.cell_type == "markdown"]
    terms = glossary_terms(glossary.read_text()) if glossary.exists() else {}
    values = glued(nb)
    for cell, text in zip(cells, link_glossary([inline_glued_terms(c.source, values, terms) for c in cells], terms)):
        cell.source = typeset_math(text)


def inline_glued_terms(text: str, values: dict[str, str], terms: dict[str, str]) -> str:
    """``text`` (MyST Markdown) with each ``{glue:md}`key``` whose glued text (``values``) holds a term of the
    glossary (``terms``) replaced by that text, so that a term's first use inside a computed sentence (the
    Pareto chapter's "a TPOT of 1.05 ms") is linked where the reader meets it; the page reads the same."""
    holds_term = _any_term(tuple(terms)).search
    return re.sub(r"\{glue:md\}`([^`]+)`",
                  lambda m: values[m.group(1)] if m.group(1) in values and holds_term(values[m.group(1)]) else m.group(0), text)


@functools.lru_cache(maxsize=4)
def _any_term(terms: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern finding any of ``terms`` as a whole word, case-insensitive (never matches when there
    are none)."""
    return re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, terms))})(?!\w)" if terms else r"(?!)", re.I)


def typeset_pages(src: Path) -> None:
    """:func:`typeset_math` on every Markdown page of the staged book ``src`` that holds a ``$``."""
    for page in sorted(src.glob("*.md")):
        text = page.read_text()
        if "$" in text:
            page.write_text(typeset_math(text))

# ---- tables that reflow on a phone ------------------------------------------------------------------

def label_table_cells(html_text: str) -> str:
    """``html_text`` with ``data-label="<its column's header>"`` on every body ``<td>`` of each table
    inside a ``<div class="jalapeno-table">`` (:func:`jalapeno.publish.notebook.table`), so that below
    600 px ``book/_static/jalapeno.css`` can show each row as a block of labelled values. A cell's column
    is the header whose ``id`` its ``headers`` attribute names (great_tables writes both), else the
    header at its position (``colspan`` counted); a header's text is its text content, whitespace
    collapsed (empty for an unnamed column). Parsed with the standard library's ``html.parser``; only
    the start tags of the cells change, every other byte is kept. A cell that already has a
    ``data-label`` is left as it is; a text without such a table comes back unchanged."""
    import html
    from html.parser import HTMLParser

    if "jalapeno-table" not in html_text:
        return html_text
    starts = [0]
    for line in html_text.split("\n"):  # html.parser counts lines by "\n" alone
        starts.append(starts[-1] + len(line) + 1)

    class Cells(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.depth = 0          # open <div>s since the first jalapeno-table div (0: outside one)
            self.section = ""       # "thead" or "tbody" of the current table
            self.header_row: list[tuple[str | None, int, list[str]]] = []  # (id, colspan, text) of <th>s
            self.headers: list[tuple[str | None, int, str]] = []  # the last header row of the table
            self.text: list[str] | None = None
            self.column = 0
            self.edits: list[tuple[int, str, str]] = []  # (offset, old start tag, new start tag)

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            a = dict(attrs)
            if tag == "div" and (self.depth or "jalapeno-table" in (a.get("class") or "").split()):
                self.depth += 1
            if not self.depth:
                return
            if tag in ("thead", "tbody"):
                self.section = tag
            elif tag == "tr":
                self.column = 0
                if self.section == "thead":
                    self.header_row = []
            elif tag == "th" and self.section == "thead":
                self.text = []
                self.header_row.append((a.get("id"), int(a.get("colspan") or 1), self.text))
            elif tag == "td" and self.section == "tbody":
                by_id = {i: t for i, _, t in self.headers if i}
                label = next((by_id[h] for h in (a.get("headers") or "").split() if h in by_id), None)
                if label is None:
                    at = 0
                    for _, span, t in self.headers:
                        if at <= self.column < at + span:
                            label = t
                            break
                        at += span
                self.column += int(a.get("colspan") or 1)
                if label is not None and "data-label" not in a:
                    old = self.get_starttag_text()
                    line, col = self.getpos()
                    end = -2 if old.endswith("/>") else -1
                    new = old[:end] + f' data-label="{html.escape(label, quote=True)}"' + old[end:]
                    self.edits.append((starts[line - 1] + col, old, new))

        def handle_endtag(self, tag: str) -> None:
            if not self.depth:
                return
            if tag == "div":
                self.depth -= 1
            elif tag == "th" and self.text is not None:
                self.text = None
            elif tag == "tr" and self.section == "thead" and self.header_row:
                self.headers = [(i, span, " ".join("".join(t).split())) for i, span, t in self.header_row]
            elif tag == "table":
                self.section, self.headers, self.header_row = "", [], []

        def handle_data(self, data: str) -> None:
            if self.text is not None:
                self.text.append(data)

    parser = Cells()
    parser.feed(html_text)
    parser.close()
    out, at = [], 0
    for offset, old, new in parser.edits:
        assert html_text[offset:offset + len(old)] == old, (offset, old)
        out += [html_text[at:offset], new]
        at = offset + len(old)
    return "".join(out) + html_text[at:]


def label_notebook_tables(nb: nbformat.NotebookNode) -> None:
    """Label the body cells of every table (:func:`label_table_cells`) in the HTML outputs of ``nb``, in
    place: done on the staged copy of a chapter, never on the committed notebook (whose outputs nbval
    compares)."""
    for data, html in html_outputs(nb):
        if "jalapeno-table" in html:
            data["text/html"] = label_table_cells(html)


# ---- the changelog, grouped by chapter and quantity -------------------------------------------------

#: A glued number in a chapter's Markdown: ``{glue:md}`key``` (also ``{glue}`` and ``{glue:text}``).
_GLUE_REF = re.compile(r"\{glue(?::md|:text)?\}`([^`]+)`")
#: MyST roles and Markdown marks a reader label drops: ``{term}`MTP``` -> MTP, ``{ref}`text <target>``` -> text,
#: ``[text](address)`` -> text, emphasis marks.
_ROLE = re.compile(r"\{[a-z:-]+\}`([^`<]*?)(?:\s*<[^`>]*>)?`")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
#: A developer's reference in a quantity's description, ``(jalapeno.comparison.baseline_summary)``.
_INTERNAL = re.compile(r"\s*\(jalapeno\.[^)]*\)")
#: Where a sentence of prose ends (before the next one starts with a capital, a number or a glued value).
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9({*\"“])")
#: At most this many words of a sentence on each side of the number it labels.
LABEL_WORDS = 14


def _reader_text(text: str) -> str:
    """``text`` (Markdown of a chapter) without MyST roles, links and emphasis marks, one line."""
    text = re.sub(r"</?[A-Za-z][^>]*>", "", _LINK.sub(r"\1", _ROLE.sub(r"\1", text)))  # links, roles, HTML tags
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\1", text.replace("**", ""))  # emphasis marks
    return " ".join(text.split())


def _clip(words: list[str], at: int) -> str:
    """The words of a sentence around word ``at``, at most :data:`LABEL_WORDS` on each side, with an
    ellipsis where words were left out."""
    lo, hi = max(0, at - LABEL_WORDS), min(len(words), at + LABEL_WORDS + 1)
    return ("… " if lo else "") + " ".join(words[lo:hi]) + (" …" if hi < len(words) else "")


def _table_row(line: str) -> str:
    """A row of a Markdown table as a reader says it: a name and its value (``chips: 64``), more cells
    joined by semicolons."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return (": " if len(cells) == 2 else "; ").join(cells)


def prose_labels(cells: list[str], values: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Where a chapter's prose first quotes each glued number: key -> (the heading of its section, the
    sentence that quotes it). ``cells``: the chapter's Markdown cells in order; ``values``: key -> the
    text its number shows (:func:`glued`). In the sentence the number itself reads ``{value}`` (a
    placeholder the changelog fills with the value of its row) and every other glued number its value;
    MyST roles, links and emphasis are dropped, the words around the number kept (:func:`_clip`). The
    chapter's own title is the section of numbers quoted before its first ``##`` heading."""
    out: dict[str, tuple[str, str]] = {}
    section = ""
    for source in cells:
        for block in re.split(r"\n\s*\n", source):
            lines = []
            for line in block.splitlines():
                if re.match(r"#{1,6} ", line):
                    section = _reader_text(line.lstrip("#"))
                elif not line.startswith((":::", "```", ":")):
                    lines.append(line)
            # a table row is a unit of its own; a list item (with its continuation lines) and a paragraph
            # split at their full stops
            units: list[str] = []
            texts: list[list[str]] = [[]]
            for line in lines:
                item = re.match(r"\s*(?:[-*+]|\d+\.)\s+(.*)", line)
                if line.lstrip().startswith("|"):
                    units.append(_table_row(line))
                    texts.append([])
                elif item:
                    texts.append([item.group(1)])
                else:
                    texts[-1].append(line.strip())
            units += [u for t in texts for u in _SENTENCE_END.split(" ".join(t))]
            for unit in units:
                for key in dict.fromkeys(_GLUE_REF.findall(unit)):
                    if key in out:
                        continue
                    marked = _GLUE_REF.sub(lambda m: "\0" if m.group(1) == key else values.get(m.group(1), m.group(1)), unit)
                    words = _reader_text(marked.replace("\0", "\x01", 1).replace("\0", "")).split()
                    at = next((i for i, w in enumerate(words) if "\x01" in w), 0)
                    out[key] = (section, _clip(words, at).replace("\x01", "{value}"))
    return out


def chapter_titles() -> dict[str, str]:
    """Each chapter's title, from its committed notebook (:func:`chapter_title`): name -> title."""
    return {n: chapter_title(committed_notebook(n), n) for n in notebook_names()}


def _claim_label(claim: dict[str, object]) -> str:
    """A claim of ``data/claims.csv`` (a row of :func:`jalapeno.data.claims_table`) in a reader's words: its
    quantity and the value published for it (``latency saved per step in the example, published as
    200 ms``), the value by the display rule."""
    unit = str(claim.get("unit") or "")
    values = [v for v in (claim.get("value"), claim.get("value_high")) if v is not None and v != ""]
    if len(values) == 2:  # a range: a number's unit once, after the second value (18–36 months, 1.5–1.8x)
        low = display.quantity(values[0], unit)
        value = f"{low.removesuffix(' ' + unit).removesuffix('x') if unit not in display.WORDED_UNITS else low}–" \
                f"{display.quantity(values[1], unit)}"
    else:
        value = display.quantity(values[0], unit) if values else ""
    published = f", published as {value}" if value else ""
    return (claim.get("quantity") or str(claim.get("claim_id"))) + published


def number_labels(current: dict[str, dict[str, str]] | None = None) -> dict[str, dict[str, dict[str, str]]]:
    """A reader's label of each number the committed notebooks glue: chapter -> key -> ``{"group",
    "label", "order"}``. ``group`` is the quantity it shows when it names one (its description in
    :data:`jalapeno.chapters.quantities.QUANTITIES`, developer references dropped), else, for a claim's
    status (``<claim id>-status`` of the claims chapter), the claims of the chapter that treats it, for a
    claim's value glued under its id and quoted by no prose, the claims' computed values, else the section
    of the prose that first quotes it (:func:`prose_labels`); ``label`` is the sentence that quotes it (for
    a quantity "the quantity's value" when no prose does, after the name of the variant when it shows
    one), or the claim's quantity and published value (``data/claims.csv``), ``{value}`` standing for the
    number; ``order`` sorts the groups by where the chapter first shows them. A number a chapter glues but no prose, quantity or claim names has no
    label (the changelog shows its key). ``current`` (chapter -> key -> text: a build's numbers): the other
    numbers a sentence quotes read as that build's, not as the committed notebooks'."""
    titles = chapter_titles()
    claims = {r["claim_id"]: r for r in claims_table().iter_rows(named=True)}
    out: dict[str, dict[str, dict[str, str]]] = {}
    for name in notebook_names():
        nb = committed_notebook(name)
        values, known = {**glued(nb), **(current or {}).get(name, {})}, quantities(nb)
        prose = prose_labels([c.source for c in nb.cells if c.cell_type == "markdown"], values)
        order = {k: f"{i:05d}" for i, k in enumerate(prose)}
        mine: dict[str, dict[str, str]] = {}
        for key in values:
            if key in known:
                q, variant = known[key]
                what = _INTERNAL.sub("", QUANTITIES[q].what) if q in QUANTITIES else q
                said = prose[key][1] if key in prose else "the quantity's value"
                mine[key] = {"group": what[:1].upper() + what[1:],
                             "label": f"{variant}: {said}" if variant else said,
                             "order": order.get(key, "99999")}
            elif key.endswith("-status") and key.removesuffix("-status") in claims:
                claim = claims[key.removesuffix("-status")]
                chapter = claim.get("chapter") or ""
                mine[key] = {"group": f"Status of the claims treated in “{titles.get(chapter, chapter)}”",
                             "label": _claim_label(claim),
                             "order": "50000" + chapter}
            elif key in claims and key not in prose:  # a claim's computed value, glued under its id
                mine[key] = {"group": "Computed values of the claims", "label": _claim_label(claims[key]),
                             "order": "60000"}
            elif key in prose:
                section, sentence = prose[key]
                mine[key] = {"group": section or titles[name], "label": sentence, "order": order[key]}
        out[name] = mine
    return out


#: A reader's text in a Markdown table cell or list: one line, whole, ``|`` escaped and ``<`` written as
#: an entity (a reason's ``<claim id>`` is text, not an HTML tag).
TEMPLATES.filters["reader_cell"] = lambda text: (" ".join(str(text).split()).replace("|", "\\|")
                                                 .replace("<", "&lt;").replace(">", "&gt;"))


def _reader_html(text: object) -> str:
    """A reader's text of the changelog as HTML: escaped, one line, ``**value**`` in bold
    (``<strong>``), a ``` `key` ``` in code."""
    import html

    escaped = html.escape(" ".join(str(text).split()), quote=False)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped))


TEMPLATES.filters["reader_html"] = _reader_html


#: The changelog's group of the numbers no sentence of today's chapters quotes (shown by their keys).
UNQUOTED = "Numbers no sentence of today's chapter quotes (by their keys)"


def changes_by_chapter(rows: list[tuple[str, str, str, str]], told: dict[str, dict[str, str]],
                       labels: dict[str, dict[str, dict[str, str]]], titles: dict[str, str] | None = None) -> list[dict]:
    """The changes ``rows`` (``(chapter, key, before, after)`` of :func:`diff_numbers`) grouped for the
    changelog: one entry per chapter (``chapter``, ``title``, ``why``: the reason ``told`` gives for the
    chapter's changes as a whole, its ``"*"``; ``counts``), each holding its ``moved``, ``added`` and
    ``removed`` numbers as groups of one quantity or section (``group``, ``rows``, ``why_column``: whether
    any row has a reason of its own), in the order the chapter shows them. A row holds ``label`` (the
    reader's label of :func:`number_labels` with ``{value}`` filled by the row's value, in bold; None when
    the number has none), ``key``, ``before``, ``after`` and ``why``: the reason ``told`` gives for that
    number alone (the chapter's reason is said once, not on every row). A number without a label (no
    sentence of today's chapters quotes it) is in the group :data:`UNQUOTED`, last, by its key."""
    titles = titles or {}
    chapters: dict[str, dict] = {}
    for chapter, key, before, after in rows:
        entry = chapters.setdefault(chapter, {"chapter": chapter, "title": titles.get(chapter, chapter),
                                              "why": str((told.get(chapter) or {}).get("*") or ""),
                                              "moved": {}, "added": {}, "removed": {}})
        kind = "added" if before == "(new)" else "removed" if after == "(removed)" else "moved"
        info = (labels.get(chapter) or {}).get(key)
        value = before if kind == "removed" else after
        label = info["label"].replace("{value}", f"**{value}**") if info else None
        if label and "{value}" not in info["label"] and kind != "moved":  # a quantity's label: its value after it
            label += f": **{value}**"
        group = (info["order"], info["group"]) if info else ("~", UNQUOTED)
        entry[kind].setdefault(group, []).append({"label": label, "key": key, "before": before, "after": after,
                                                  "why": str((told.get(chapter) or {}).get(key) or "")})
    out = []
    book_order = list(titles)
    for entry in sorted(chapters.values(), key=lambda e: (book_order.index(e["chapter"]) if e["chapter"] in book_order
                                                           else len(book_order), e["chapter"])):
        entry["counts"] = {k: sum(len(r) for r in entry[k].values()) for k in ("moved", "added", "removed")}
        for kind in ("moved", "added", "removed"):
            groups: dict[str, list[dict]] = {}
            for (_, name), rs in sorted(entry[kind].items()):
                groups.setdefault(name, []).extend(rs)
            entry[kind] = [{"group": g, "rows": rs, "why_column": any(r["why"] for r in rs)} for g, rs in groups.items()]
        out.append(entry)
    return out
