"""The book build and the reruns: offline HTML, parameters, clear errors, nothing half-written
(golden cases 8, 9, 10)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from jalapeno import build, cli

ROOT = Path(__file__).resolve().parent.parent
JALAPENO = [sys.executable, "-m", "jalapeno.cli"]


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "html"
    index = build.build(out=out)
    return out, index


def text_of(page: Path) -> str:
    t = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", page.read_text(), flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", t))


def test_book_has_every_chapter_figure_and_the_claims_table(book):
    out, index = book
    assert index == out / "index.html" and index.exists()
    chapters = {p.stem for p in (out / "chapters").glob("*.html")}
    assert chapters == set(build.notebook_names())
    assert len(list((out / "figures").glob("*.svg"))) >= 5
    reading = text_of(out / "chapters" / "reading-the-numbers.html")
    assert "44,960 tok/s/kW" in reading and "1.868 ms" in reading
    assert "gptoss-gb200-tok-per-kw" in reading and "not reproducible" in reading
    assert "1,343 LPUs" in text_of(out / "chapters" / "roofline.html")


def test_book_loads_nothing_from_the_network(book):
    out, _ = book
    build.check_offline(out)  # raises on any external script, stylesheet, image or frame
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
        build.check_offline(tmp_path)


def test_rerun_with_a_parameter_changes_the_chapter(tmp_path, capsys):
    out = tmp_path / "whatif"
    assert cli.main(["build", "reading-the-numbers", "-p", "baseline_power_w", "1400", "--out", str(out)]) == 0
    page = text_of(out / "chapters" / "reading-the-numbers.html")
    assert "38,537 tok/s/kW" in page  # 53,952 tok/s / 1.4 kW
    assert "changed" in page
    assert not (out / "chapters" / "roofline.html").exists()


@pytest.mark.parametrize("argv, fragment", [
    (["build", "-p", "concurency", "128"], "unknown parameter 'concurency'; valid parameters: "),
    (["build", "no-such-chapter"], "unknown notebook 'no-such-chapter'; valid notebooks: reading-the-numbers, roofline"),
    (["build", "roofline", "-p", "context_tokens", "64.0"], "parameter 'context_tokens' must be an integer"),
    (["build", "roofline", "-p", "models", "gpt-oss-120b"], "parameter 'models' must be a list"),
])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, argv, fragment):
    out = tmp_path / "site"
    proc = subprocess.run(JALAPENO + argv + ["--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert fragment in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_failing_notebook_names_itself_and_keeps_the_old_output(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "old.txt").write_text("previous build")
    with pytest.raises(build.BuildError, match="notebook 'roofline' failed .*unknown chip 'gb400'"):
        build.build(["roofline"], {"chips": ["gb400"]}, out)
    assert [p.name for p in tmp_path.iterdir()] == ["site"]
    assert (out / "old.txt").read_text() == "previous build"


def test_missing_kernel_is_reported_with_notebook_and_kernel(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "KERNEL", "jalapeno-venv")
    with pytest.raises(build.BuildError, match="notebook 'roofline' \\(kernel 'jalapeno-venv'\\) could not run"):
        build.build(["roofline"], {}, tmp_path / "site")


def test_papermill_direct_run_rejects_string_for_a_list(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError, match="parameter 'models' must be a list"):
        papermill.execute_notebook(str(ROOT / "notebooks" / "roofline.ipynb"), str(tmp_path / "o.ipynb"),
                                   parameters={"models": '["gpt-oss-120b"]'}, kernel_name="python3",
                                   progress_bar=False)


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
