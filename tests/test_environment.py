"""pyproject.toml is the one list of dependencies; environment.yml mirrors it."""

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_environment_yml_mirrors_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = set(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        wanted |= set(extra)
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert set(pip) == wanted
    assert "python=3.11" in env["dependencies"]
