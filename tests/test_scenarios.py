"""Scenario rebuilds: a named YAML file of assumptions rebuilds the book into its own folder, with its
name and parameters on every page; a scenario is checked whole before anything runs (golden case 9)."""

import html
import re
import shlex
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from jalapeno import comparison, display
from jalapeno.publish import build, cli, pages, params, scenarios
from jalapeno.errors import UnknownNameError

ROOT = Path(__file__).resolve().parent.parent
JALAPENO = [sys.executable, "-m", "jalapeno.publish.cli"]
SHIPPED = sorted((ROOT / "scenarios").glob("*.yml"))


def text_of(page: Path) -> str:
    t = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", page.read_text(), flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", t))


def banner_of(page: Path) -> str:
    m = re.search(r'<div class="[^"]*\bjalapeno-scenario\b[^"]*">(.*?Rebuild it:.*?)</p>', page.read_text(), re.S)
    assert m, f"no scenario banner on {page}"
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", m.group(1)))).replace("\u2019", "'")  # Sphinx's smart quotes


def test_four_example_scenarios_are_shipped():
    assert {p.stem for p in SHIPPED} == {"e2e-one-point", "gb300-baseline", "jalapeno-sustained-550w",
                                         "vera-rubin-baseline"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_scenario_is_valid_and_names_itself(path):
    s = scenarios.load_scenario(path)
    assert s.name == path.stem and len(s.description) > 80
    runs = scenarios.plan(None, s.parameters, s.notebooks)
    assert any(runs.values())  # it changes something
    assert build.output_dir(s) == ROOT / "build" / "scenarios" / path.stem
    assert scenarios.load_scenario(path.stem) == s  # a shipped scenario is found by name too


def test_command_line_parameters_win_over_the_scenario():
    s = scenarios.load_scenario("gb300-baseline")
    runs = scenarios.plan(None, s.parameters, s.notebooks, {"baseline_power_w": 1200, "context_tokens": 32768})
    assert runs["reading-the-numbers"] == {"baseline_power_w": 1200}
    assert runs["roofline"]["focus_chip"] == "gb300" and runs["roofline"]["context_tokens"] == 32768


#: Chapters every scenario build below holds besides those the scenario changes (the Vera Rubin and
#: 550 W scenarios each leave one of them alone, whose banner says so; most leave the verdict alone, and
#: the landing page then says its short answer is the default book's).
ALWAYS = {"reading-the-numbers", "roofline", "verdict"}


def scenario_chapters(s) -> list[str]:
    """The chapters a scenario build of the tests holds: every one the scenario changes, and ALWAYS."""
    return sorted(ALWAYS | {c for c, v in scenarios.plan(None, s.parameters, s.notebooks).items() if v})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every shipped scenario built once, with the chapters it changes and one it does not (a scenario's
    banner and parameters are per page; a whole book per scenario would only repeat the unchanged ones)."""
    out = {}
    for path in SHIPPED:
        target = tmp_path_factory.mktemp(path.stem) / "site"
        s = scenarios.load_scenario(path.stem)
        build.build(scenario_chapters(s), out=target, scenario=path, progress=False)
        out[path.stem] = target
    return out


@pytest.mark.parametrize("name", [p.stem for p in SHIPPED])
def test_every_page_of_a_scenario_build_names_it_and_shows_its_parameters(built, name):
    site = built[name]
    s = scenarios.load_scenario(name)
    runs = scenarios.plan(None, s.parameters, s.notebooks)
    built_chapters = scenario_chapters(s)
    assert any(runs[c] for c in built_chapters)
    for chapter in built_chapters:
        values = runs[chapter]
        banner = banner_of(site / "chapters" / f"{chapter}.html")
        assert f"Scenario: {name}" in banner
        assert f"--scenario scenarios/{name}.yml" in banner
        if len(built_chapters) > 1:  # its command rebuilds this chapter beside the scenario's book, not over it
            assert f"--out {site.resolve().with_name(f'{site.name}-{chapter}')}" in banner
        declared = {p.name: p for p in params.declaration(scenarios.notebook_path(chapter))}
        for key, value in values.items():  # as a reader writes them: an unset default as what it stands for
            p = declared[key]
            assert f"{key} {display.text(value)} {p.shown(p.default)}" in banner
            assert p.default is not None or f"{key} {display.text(value)} unset: " in banner
        if not values:
            assert "takes none of these parameters" in banner
    intro = banner_of(site / "intro.html")
    assert f"Scenario: {name}" in intro
    if "verdict" in built_chapters and not runs["verdict"]:  # the short answer's numbers are the default book's
        assert "left the verdict chapter at its default parameters" in text_of(site / "intro.html")
    assert all(f"{c}: {k}" in intro for c in built_chapters for k in runs[c])
    assert (site / "figures.html").exists() and f"--scenario scenarios/{name}.yml" in text_of(site / "figures.html")
    assert f"under the scenario {name}" in text_of(site / "this-build.html")


def test_gb300_scenario_divides_by_gb300_power_and_focuses_the_roofline(built):
    site = built["gb300-baseline"]
    reading = text_of(site / "chapters" / "reading-the-numbers.html")
    s = comparison.baseline_summary(baseline_power_w=1400)
    assert f"{s.tok_s_per_kw:,.0f} tok/s/kW" in reading
    roofline = text_of(site / "chapters" / "roofline.html")
    assert "on NVIDIA GB300" in roofline


def test_sustained_550w_scenario_changes_the_all_in_ratio(built):
    site = built["jalapeno-sustained-550w"]
    s = comparison.baseline_summary()
    bases = comparison.power_basis_table(s, jalapeno_sustained_w=550.0, jalapeno_allin_w=962.5)
    allin = bases.filter(pl.col("basis") == "all-in-proportional").row(0, named=True)
    default = comparison.power_basis_table(s).filter(pl.col("basis") == "all-in-proportional").row(0, named=True)
    assert f"{allin['ratio']:.2f}" != f"{default['ratio']:.2f}"
    page = text_of(site / "chapters" / "reading-the-numbers.html")
    assert f"the ratio is {allin['ratio']:.2f}x" in page
    assert f"{default['ratio']:.2f}x: per-watt" not in page
    html = (site / "chapters" / "reading-the-numbers.html").read_text()
    assert '"value": 962.5' in html  # the explorable figure starts at the scenario's all-in power


def test_vera_rubin_scenario_focuses_the_roofline_and_leaves_reading_alone(built):
    site = built["vera-rubin-baseline"]
    assert "on NVIDIA Rubin GPU" in text_of(site / "chapters" / "roofline.html")
    assert "takes none of these parameters" in banner_of(site / "chapters" / "reading-the-numbers.html")


def _run(argv, cwd):
    return subprocess.run(JALAPENO + argv, capture_output=True, text=True, cwd=cwd)


def _scenario(folder: Path, body: dict) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "s.yml"
    path.write_text(yaml.safe_dump(body))
    return path


def _valid(kind: str) -> str:
    if kind == "notebooks":
        return ", ".join(scenarios.notebook_names())
    if kind == "parameters":
        return ", ".join(sorted({p for n in scenarios.notebook_names() for p in params.declared(scenarios.notebook_path(n))}))
    return ", ".join(params.declared(scenarios.notebook_path(kind)))


@pytest.mark.parametrize("body, fragment", [
    ({"name": "x", "description": "d", "notebooks": {"roofline": {"focus_chipp": "gb300"}}},
     lambda: f"unknown roofline parameter 'focus_chipp'; valid roofline parameters: {_valid('roofline')}"),
    ({"name": "x", "description": "d", "parameters": {"concurency": 64}},
     lambda: f"unknown parameter 'concurency'; valid parameters: {_valid('parameters')}"),
    ({"name": "x", "description": "d", "notebooks": {"no-such-chapter": {"a": 1}}},
     lambda: f"unknown notebook 'no-such-chapter'; valid notebooks: {_valid('notebooks')}"),
    ({"name": "x", "description": "d", "notebooks": {"roofline": {"chips": "gb300"}}},
     lambda: "parameter 'chips' must be a"),
    ({"name": "x", "description": "d", "parameter": {"a": 1}},
     lambda: "unknown key 'parameter'; valid keys: name, description, parameters, notebooks"),
    ({"name": "GB 300", "description": "d", "parameters": {"isl": 1024}},
     lambda: "'name' must be lower-case letters, digits and dashes, got 'GB 300'"),
    ({"name": "x", "parameters": {"isl": 1024}}, lambda: "'description' must be a non-empty text"),
])
def test_bad_scenario_exits_2_names_the_value_and_writes_nothing(tmp_path, body, fragment):
    path = _scenario(tmp_path / "in", body)
    work = tmp_path / "work"
    work.mkdir()
    proc = _run(["build", "--scenario", str(path), "--out", str(work / "site")], work)
    assert proc.returncode == 2, proc.stderr
    assert fragment() in proc.stderr
    assert list(work.iterdir()) == []


def test_scenario_parameter_no_chosen_notebook_takes_is_an_error(tmp_path):
    proc = _run(["build", "roofline", "--scenario", "jalapeno-sustained-550w", "--out", str(tmp_path / "s")], tmp_path)
    assert proc.returncode == 2
    assert "scenario scenarios/jalapeno-sustained-550w.yml: unknown parameter 'jalapeno_sustained_w'" in proc.stderr
    assert f"valid parameters: {', '.join(sorted(params.declared(scenarios.notebook_path('roofline'))))}" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_unknown_scenario_name_lists_the_shipped_ones(tmp_path):
    proc = _run(["build", "--scenario", "gb400-baseline"], tmp_path)
    assert proc.returncode == 2
    assert "unknown scenario 'gb400-baseline'; valid scenarios: e2e-one-point, gb300-baseline, " \
           "jalapeno-sustained-550w, vera-rubin-baseline" in proc.stderr
    with pytest.raises(UnknownNameError):
        scenarios.load_scenario("gb400-baseline")


@pytest.mark.parametrize("overrides", [
    {"baseline_power_w": 1400},
    {"chips": ["gb300", "vera-rubin"], "focus_chip": "gb300", "context_tokens": 32768},
    {"workloads": [[1024, 1024], [8192, 1024]], "include_mtp": True, "label": "yes", "scale": 1e-06},
])
def test_the_rebuild_command_reads_back_as_the_same_parameters(overrides):
    """The command a banner and the Figures page print is the README's command (``.venv/bin/jalapeno``),
    one ``-p NAME VALUE`` per parameter, and the CLI reads it back to the very values (a text that looks
    like a flag stays a text)."""
    command = pages.build_command(["roofline"], None, overrides)
    words = shlex.split(command)
    assert words[:3] == [".venv/bin/jalapeno", "build", "roofline"]
    assert words.count("-p") == len(overrides) and "-y" not in words
    assert cli._parameters(cli._parser().parse_args(words[1:])) == overrides


def test_a_short_answer_left_at_its_defaults_says_so():
    text = "<!-- jalapeno:if-built verdict -->A <!-- jalapeno:quote verdict/pw_rated -->x lead.<!-- jalapeno:end-if -->"
    numbers = {"verdict": {"pw_rated": "1.90"}}
    assert pages.quote_chapters(text, numbers, "p.md") == "A 1.90x lead."
    noted = pages.quote_chapters(text, numbers, "p.md", at_defaults=("verdict",))
    assert noted == ("*This build left the verdict chapter at its default parameters: the numbers below are the "
                     "default book's, not this build's.*\n\nA 1.90x lead.")
