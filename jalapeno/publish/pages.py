"""The pages a build generates around the chapters (figures, environment, how to cite, the changelog
of published numbers, the data files' digests, the banner of a rebuilt page), the recorded numbers of
each version, and the check that no page loads anything from the network."""

from __future__ import annotations

import hashlib
import html as _html
import json
import re
import tomllib
from pathlib import Path

import nbformat
import yaml

from .. import charts
from ..data import REPO_ROOT, data_dir
from ..errors import BuildError, JalapenoError
from . import scenarios
from .execute import _installed
from .scenarios import Scenario

_GLUE_MIME = "application/papermill.record/text/markdown"


def _toc(src: Path, chosen: list[str]) -> None:
    toc_path = src / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text())
    keep = {f"chapters/{n}" for n in chosen}
    for part in toc.get("parts", [toc]):
        part["chapters"] = [c for c in part.get("chapters", [])
                            if not c["file"].startswith("chapters/") or c["file"] in keep]
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]] if "parts" in toc else None
    if toc["parts"] is None:
        del toc["parts"]
    toc_path.write_text(yaml.safe_dump(toc, sort_keys=False))


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


def runtime_script() -> str:
    """The chart runtime as the book serves it: the vl-convert bundle inside a function, so that its
    top-level names (one is ``_``) cannot clash with Sphinx's scripts; it still sets
    ``window.vegaEmbed``, ``window.vega`` and ``window.vegaLite``."""
    bundle = charts.runtime_bundle()
    return bundle if bundle.startswith("(function(){") else "(function(){\n" + bundle + "\n})();\n"


def _chapter_title(nb: nbformat.NotebookNode, default: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return default


def _md_value(value: object) -> str:
    return "`" + repr(value).replace("|", "\\|").replace("`", "'") + "`"


def _banner(title: str, description: str, rows: list[tuple[str, object, object]], command: str) -> str:
    """A MyST admonition naming the scenario and listing the parameters a page was computed with."""
    lines = [":::{admonition} " + title, ":class: warning jalapeno-scenario", "", description, ""]
    if rows:
        lines += ["| parameter | this build | default |", "| --- | --- | --- |"]
        lines += [f"| `{k}` | {_md_value(v)} | {_md_value(d)} |" for k, v, d in rows]
    else:
        lines.append("This page takes none of these parameters: it is computed with its defaults.")
    lines += ["", f"Rebuild it: `{command}`", ":::", ""]
    return "\n".join(lines)


def _insert_after_title(text: str, block: str) -> str:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join(lines[:i + 1] + ["", block] + lines[i + 1:]) + "\n"
    return block + "\n" + text


def _glued(nb: nbformat.NotebookNode) -> dict[str, str]:
    """The values a notebook glued for its prose: key -> the text the page shows."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name and _GLUE_MIME in o.get("data", {}):
                out[name] = str(o["data"][_GLUE_MIME])
    return dict(sorted(out.items()))


_SVG_TITLE = re.compile(r'role-title-text"[^>]*>\s*<text[^>]*>(.*?)</text>', re.S)


def figure_caption(svg: str, default: str) -> str:
    """A figure's caption: the title drawn in its SVG (vl-convert), else ``default``."""
    m = _SVG_TITLE.search(svg)
    return _html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip() if m else default


def _version() -> str:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]


def _figures_page(figures: list[dict[str, str]], titles: dict[str, str], scenario: Scenario | None) -> str:
    out = ["# Figures", "",
           "Every figure of this build, exported under its stable name as SVG (vector, for print), PNG "
           "(twice the screen size, for slides) and CSV (the data it draws) into the folder `figures/` of the "
           "built site. Each entry "
           "says which chapter draws it and the command that regenerates it.", ""]
    if scenario:
        out += [f"These figures were drawn under the scenario `{scenario.name}`.", ""]
    if not figures:
        out += ["This build has no figures.", ""]
    for f in figures:
        caption = _html.escape(f["caption"])
        out += [f"## {f['caption']}", "",
                f'<figure class="jalapeno-figure"><img src="figures/{f["name"]}.svg" alt="{caption}" '
                f'width="100%"><figcaption>{caption}</figcaption></figure>', "",
                f"- name: `{f['name']}`; chapter: [{titles[f['notebook']]}](chapters/{f['notebook']}.ipynb)",
                f'- files: <a href="figures/{f["name"]}.svg">{f["name"]}.svg</a>, '
                f'<a href="figures/{f["name"]}.png">{f["name"]}.png</a>, '
                f'<a href="figures/{f["name"]}.csv">{f["name"]}.csv</a> (the data drawn)',
                f"- regenerate: `{f['command']}`", ""]
    return "\n".join(out)


def _environment_page() -> str:
    import platform

    import vl_convert as vlc

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    groups = {"core": project["dependencies"], **project["optional-dependencies"]}
    rows = []
    for group, reqs in groups.items():
        for req in reqs:
            dist, _, pinned = req.partition("==")
            have = _installed(dist)
            rows.append(f"| `{dist}` | {group} | {pinned} | {have} | {'yes' if have == pinned else '**no**'} |")
    mismatches = sum(r.endswith("**no** |") for r in rows)
    return "\n".join([
        "# Environment", "",
        f"This book (version {_version()}) was built with Python {platform.python_version()} and the packages "
        "below. `pyproject.toml` pins each one (`environment.yml` mirrors it for conda); the table shows the "
        "pinned version next to the one installed when the book was built.",
        "" if not mismatches else f"\n**{mismatches} installed versions differ from the pins**: outputs may "
        "differ from the committed notebooks.\n", "",
        "| package | extra | pinned | installed | matches |", "| --- | --- | --- | --- | --- |", *rows, "",
        "The interactive charts run in the reader's browser on the chart runtime that the installed "
        f"vl-convert-python ships: Vega {vlc.get_vega_version()}, Vega-Lite "
        f"{', '.join(vlc.get_vegalite_versions()[-1:])}, vega-embed {vlc.get_vega_embed_version()}. The book "
        "serves it from its own files; no page loads anything from the network.", "",
        "Recreate the environment: `make test` (creates `.venv` and installs the pins), or "
        "`conda env create -f environment.yml` then `pip install -e .`.", ""])


def _cite_page() -> str:
    cff = yaml.safe_load((REPO_ROOT / "CITATION.cff").read_text())
    authors = [a.get("name") or " ".join(x for x in (a.get("given-names"), a.get("family-names")) if x)
               for a in cff.get("authors", [])]
    key = "jalapeno_book_" + str(cff["version"]).replace(".", "_")
    bib = ["@misc{" + key + ",", "  title = {" + cff["title"] + "},",
           "  author = {" + " and ".join("{" + a + "}" for a in authors) + "},",
           "  version = {" + str(cff["version"]) + "},"]
    if cff.get("date-released"):
        bib.append("  year = {" + str(cff["date-released"])[:4] + "},")
    if cff.get("repository-code") or cff.get("url"):
        bib.append("  url = {" + str(cff.get("repository-code") or cff.get("url")) + "},")
    bib.append("  note = {Reproducible analysis book; cite the version you used}")
    bib.append("}")
    return "\n".join([
        "# How to cite", "", cff.get("message", "").strip(), "",
        f"- title: {cff['title']}", f"- version: {cff['version']}", f"- authors: {', '.join(authors)}",
        f"- licence: {cff.get('license', 'not stated')}", "",
        "The citation metadata lives in `CITATION.cff` at the root of the repository (Citation File "
        "Format); this page is generated from it at every build. As BibTeX:", "",
        "```bibtex", *bib, "```", "",
        "Cite the data the book uses as well: see [Data and sources](data.md). When you quote a number "
        "from a rebuilt scenario, name the scenario and its parameters (the banner on each page lists them).",
        ""])


def _version_key(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"[.\-]", v))


def published_numbers() -> dict[str, dict[str, dict[str, str]]]:
    """The recorded numbers of each published version (``book/published-numbers/<version>.json``),
    oldest first: version -> chapter -> key -> text."""
    folder = scenarios.BOOK_DIR / "published-numbers"
    files = sorted(folder.glob("*.json"), key=lambda p: _version_key(p.stem))
    return {p.stem: json.loads(p.read_text()) for p in files}


def _diff_numbers(old: dict[str, dict[str, str]], new: dict[str, dict[str, str]]) -> list[tuple[str, str, str, str]]:
    rows = []
    for chapter in sorted(set(old) | set(new)):
        a, b = old.get(chapter, {}), new.get(chapter, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                rows.append((chapter, key, a.get(key, "(new)"), b.get(key, "(removed)")))
    return rows


def _cell(text: str) -> str:
    """A Markdown table cell: one line, whole (a reason is never cut), ``|`` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def reasons(version: str) -> dict[str, dict[str, str]]:
    """Why the numbers of ``version`` moved from the version before it: chapter -> key -> reason, from
    ``book/published-numbers/<version>.why.yml`` (empty when the file does not exist). A key ``"*"``
    gives the reason of every other change of that chapter."""
    path = scenarios.BOOK_DIR / "published-numbers" / f"{version}.why.yml"
    return yaml.safe_load(path.read_text()) or {} if path.exists() else {}


def _why(why: dict[str, dict[str, str]], chapter: str, key: str) -> str:
    mine = why.get(chapter) or {}
    return str(mine.get(key) or mine.get("*") or "")


def _changelog_page(current: dict[str, dict[str, str]], scenario: Scenario | None, changed: bool) -> str:
    versions = published_numbers()
    out = ["# Changelog of published numbers", "",
           "Every number the prose of a chapter quotes is computed and glued into the page. At each "
           "release the numbers of the default build are recorded (`jalapeno numbers --record`, into "
           "`book/published-numbers/`); this page compares the releases with each other and with this "
           "build, so a reader can see which published result moved, from what, to what.", ""]
    if not versions:
        out += ["No version has been recorded yet.", ""]
    names = list(versions)
    for i, v in reversed(list(enumerate(names))):
        nums = versions[v]
        total = sum(len(c) for c in nums.values())
        out += [f"## Version {v}", "", f"{total} numbers in {len(nums)} chapters recorded."]
        if i == 0:
            out += ["This is the first recorded version.", ""]
            continue
        rows = _diff_numbers(versions[names[i - 1]], nums)
        moved = [r for r in rows if r[2] != "(new)" and r[3] != "(removed)"]
        added = [r for r in rows if r[2] == "(new)"]
        removed = [r for r in rows if r[3] == "(removed)"]
        out += [f"Changes from version {names[i - 1]}: {len(moved)} changed, {len(added)} new, "
                f"{len(removed)} removed.", ""]
        why = reasons(v)
        if moved:
            out += ["| chapter | number | before | after | why |", "| --- | --- | --- | --- | --- |"]
            out += [f"| {c} | `{k}` | {_cell(a)} | {_cell(b)} | {_cell(_why(why, c, k))} |" for c, k, a, b in moved] + [""]
        for label, group in (("New", added), ("Removed", removed)):
            by_chapter: dict[str, list[str]] = {}
            for r in group:
                reason = _why(why, r[0], r[1])
                by_chapter.setdefault(r[0], []).append(f"`{r[1]}`" + (f" ({reason})" if reason else ""))
            if by_chapter:
                out += [f"{label} numbers, by chapter:", ""]
                out += [f"- {c} ({len(keys)}): {'; '.join(keys)}" for c, keys in by_chapter.items()] + [""]
    if names:
        latest = versions[names[-1]]
        rows = _diff_numbers({c: latest.get(c, {}) for c in current}, current)
        why = (f"under the scenario `{scenario.name}`" if scenario else
               "with changed parameters" if changed else "with the default parameters")
        out += ["## This build", "",
                f"This build was computed {why}. Numbers of its chapters that differ from version "
                f"{names[-1]}: {len(rows) or 'none'}.", ""]
        if rows:
            out += [f"| chapter | number | version {names[-1]} | this build |", "| --- | --- | --- | --- |"]
            out += [f"| {c} | `{k}` | {_cell(a)} | {_cell(b)} |" for c, k, a, b in rows] + [""]
    return "\n".join(out)


def _data_files_table() -> str:
    root = data_dir()
    rows = ["| file | rows | SHA-256 (first 16 hex digits) |", "| --- | --- | --- |"]
    for path in sorted(root.rglob("*.csv")):
        n = max(0, len(path.read_text().splitlines()) - 1)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        rel = path.relative_to(root).as_posix()
        rows.append(f'| <a href="data/{rel}">{rel}</a> | {n:,} | `{digest}` |')
    return "\n".join(["The data files of this build, each a download, with their digests (compare them with your "
                      'copy); the <a href="data/README.md">README</a> describes every column:', "", *rows, ""])


_MARKER = "<!-- jalapeno:data-files -->"


def committed_numbers() -> dict[str, dict[str, str]]:
    """The numbers the committed notebooks (executed with their defaults, as nbval keeps them) glue
    into their prose: chapter -> key -> text."""
    return {name: _glued(nbformat.read(scenarios.notebook_path(name), as_version=4)) for name in scenarios.notebook_names()}


def record_numbers(version: str | None = None, force: bool = False) -> Path:
    """Record the numbers of the committed notebooks as those of ``version`` (default: the version in
    ``pyproject.toml``) in ``book/published-numbers/<version>.json``, which the changelog page reads.
    A recorded version is not overwritten with other numbers unless ``force``."""
    version = version or _version()
    target = scenarios.BOOK_DIR / "published-numbers" / f"{version}.json"
    text = json.dumps(committed_numbers(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if target.exists() and target.read_text() != text and not force:
        raise JalapenoError(f"{scenarios._display_path(target)} already records other numbers for version {version}; "
                            "bump the version in pyproject.toml and CITATION.cff, or pass --force")
    target.parent.mkdir(exist_ok=True)
    target.write_text(text)
    return target
