"""The committed derived tables (data/derived/, jalapeno.derived): each regenerated matches the committed
one within its stage's stated relative tolerance; a table derived from other inputs or another version of
its stage is an error naming the command that regenerates it; a frame the book does not commit is
computed live."""

from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from jalapeno import calibration, derived


def _assert_tables_match(new: pl.DataFrame, old: pl.DataFrame, rtol: float) -> None:
    assert derived.mismatches(new, old, rtol) == []


def test_a_table_mismatch_is_found_on_its_own_scale():
    """A float within its relative tolerance; a point of a list within the tolerance of its list's largest
    value; anything else equal."""
    old = pl.DataFrame({"frame": ["a"], "key": ["k"], "d": [0.5], "pts": [[0.64, 0.352, 0.01]], "s": ["x"]})
    near = old.with_columns(d=pl.lit(0.5 * 1.019), pts=pl.Series([[0.64, 0.343, 0.02]]))   # 0.009 and 0.01 < 2 % of 0.64
    assert derived.mismatches(near, old, 0.02) == []
    far = old.with_columns(d=pl.lit(0.5 * 1.03), pts=pl.Series([[0.64, 0.33, 0.01]]), s=pl.lit("y"))
    assert [m.split(",")[0] for m in derived.mismatches(far, old, 0.02)] == ["d", "pts", "s"]


def test_the_schemes_read_their_committed_folds(monkeypatch):
    """The validation folds come from the table, not from a refit: with fit() broken, the shape scheme's
    held-out series are still the committed rows."""
    from jalapeno import schemes

    def broken(*args, **kwargs):
        raise AssertionError("refitted instead of reading the committed table")
    monkeypatch.setattr(calibration, "fit", broken)
    held = schemes.scheme_errors("shape")
    table = derived.committed("schemes").filter(pl.col("frame").str.starts_with("shape=") & (pl.col("kind") == "series"))
    assert held["series"].to_list() == table["series"].to_list()
    assert held["frontier_distance"].to_list() == table["frontier_distance"].to_list()


def test_a_stale_table_is_an_error_naming_its_command(monkeypatch):
    # another version of the stage's code: every key and the recorded state differ
    from jalapeno import schemes

    monkeypatch.setitem(derived.STAGES, "schemes", replace(derived.STAGES["schemes"], version=999))
    with pytest.raises(derived.StaleTableError, match=r"`jalapeno derive schemes`"):
        schemes.scheme_errors("shape")


def test_a_frame_the_book_does_not_commit_is_computed_live():
    """A fold the committed table does not hold (here a shape fold under a key of its own) is computed by
    its own function (one refit and its scoring), without error, and is not in the table."""
    from jalapeno import schemes

    name, _, compute = schemes.folds("shape")[0]
    key = derived.key("schemes", "a fold the book does not commit", name)
    (frame,) = derived.frames("schemes", [(name, key, compute)])
    assert frame["fold"].unique().to_list() == [name] and (frame["frontier_distance"] >= 0).all()
    assert key not in derived.committed("schemes")["key"].to_list()


def test_the_jalapeno_nodes_table_regenerates_within_its_tolerance(tmp_path):
    """Jalapeño's fits at every node of its unknowns, under each reading of its E2E, refitted match the
    committed table to the stage's relative tolerance (1e-3)."""
    from jalapeno import subject, uncertainty

    stage = derived.stage("jalapeno-nodes")
    assert stage.rtol == 1e-3
    new, old = pl.read_ndjson(uncertainty.derive_nodes(root=tmp_path)), derived.committed("jalapeno-nodes")
    assert old is not None, f"no committed table: run `{stage.command}`"
    assert new.height == len(subject.E2E_READINGS) * uncertainty.nodes().height
    _assert_tables_match(new, old, stage.rtol)


def test_the_calibration_regenerates_within_its_tolerance(tmp_path):
    """The fit on every measured point matches data/calibration.csv (stored to five significant digits)
    to the stage's relative tolerance (1 %), and its side file records the current inputs."""
    stage = derived.stage("calibration")
    assert stage.rtol == 0.01
    stored, refit = calibration.load(), calibration.fit()
    names = calibration.parameters(calibration.configurations())
    np.testing.assert_allclose(np.exp(calibration._vector(refit, names)), np.exp(calibration._vector(stored, names)),
                               rtol=stage.rtol)
    assert derived.side("calibration")["state"] == derived.state("calibration")
    derived.write_side("calibration", tmp_path)
    assert derived.side("calibration", tmp_path)["state"] == derived.state("calibration")


def test_every_stage_has_its_command():
    from jalapeno.publish import cli

    assert list(cli.DERIVERS) == list(derived.STAGES)
    for name in derived.STAGES:
        assert derived.side(name)["regenerate"] == f"jalapeno derive {name}"


def test_the_modes_read_by_name_or_refit(monkeypatch, tmp_path):
    """JALAPENO_DERIVED=by-name reads the committed frames whatever their keys (here every key differs: a
    bumped stage version); =live refits them (fit() called, in an empty cache); another value is refused."""
    from jalapeno import schemes

    monkeypatch.setitem(derived.STAGES, "schemes", replace(derived.STAGES["schemes"], version=999))
    monkeypatch.setenv("JALAPENO_DERIVED", "by-name")
    held = schemes.scheme_errors("shape")
    table = derived.committed("schemes").filter(pl.col("frame").str.starts_with("shape=") & (pl.col("kind") == "series"))
    assert held["frontier_distance"].to_list() == table["frontier_distance"].to_list()

    class Refitted(Exception):
        pass

    def refit(*args, **kwargs):
        raise Refitted
    monkeypatch.setattr(calibration, "fit", refit)
    monkeypatch.setattr(schemes, "_FITS", {})  # no refit kept in this process either
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("JALAPENO_DERIVED", "live")
    with pytest.raises(Refitted):
        schemes.scheme_errors("shape")
    monkeypatch.setenv("JALAPENO_DERIVED", "fresh")
    with pytest.raises(derived.UnknownNameError, match="committed, by-name, live"):
        schemes.scheme_errors("shape")


def test_the_jalapeno_fits_table_regenerates_within_its_tolerance(tmp_path):
    """Jalapeño's fits in the low, central and high scenarios, under each reading of its E2E, refitted match
    the committed table to the stage's relative tolerance (1e-3); the book's default fit is the committed one."""
    from jalapeno import subject

    stage = derived.stage("jalapeno-fits")
    assert stage.rtol == 1e-3
    new, old = pl.read_ndjson(subject.derive_fits(root=tmp_path)), derived.committed("jalapeno-fits")
    assert old is not None, f"no committed table: run `{stage.command}`"
    assert new["frame"].to_list() == [f"scenario={sc} e2e_reading={r}" for r in subject.E2E_READINGS
                                      for sc in ("low", "central", "high")]
    _assert_tables_match(new, old, stage.rtol)
    central = old.filter(pl.col("frame") == "scenario=central e2e_reading=separate").drop("frame", "key").row(0, named=True)
    assert subject.fit_jalapeno("central").constants() == central


def test_an_edited_data_file_stops_a_build_before_anything_runs_naming_the_one_command(edit_data, monkeypatch,
                                                                                        tmp_path):
    """A user adds a chip (README "Add a chip"): every stage reading chips.csv is stale, the calibration
    among them, so the one command is the whole ``jalapeno derive`` (it rewrites data/calibration.csv, an
    input of the others); the build stops before any notebook runs and writes nothing. The message names
    the files that exist (the calibration's side file, not a table it has none of)."""
    from jalapeno.publish import build

    edit_data("chips.csv", "\ngb200,", "\nh300x,NVIDIA H300X (hypothetical),NVIDIA,gpu,announced,a test row,Hopper,a test row\ngb200,")
    monkeypatch.setattr(derived, "_reads_repository_data", lambda: True)
    assert derived.stale() == ["calibration", "jalapeno-fits", "jalapeno-nodes", "schemes"]
    with pytest.raises(derived.StaleTableError, match=r"data/derived/calibration\.json was derived from other "
                       r"inputs.*regenerate with `jalapeno derive`$") as err:
        build.build(["roofline"], out=tmp_path / "site", progress=False)
    assert "calibration.jsonl" not in str(err.value)
    assert not (tmp_path / "site").exists()


def test_one_stale_stage_names_only_itself(monkeypatch):
    monkeypatch.setitem(derived.STAGES, "jalapeno-nodes", replace(derived.STAGES["jalapeno-nodes"], version=999))
    assert derived.stale() == ["jalapeno-nodes"]
    with pytest.raises(derived.StaleTableError, match=r"regenerate with `jalapeno derive jalapeno-nodes`$"):
        derived.check()


def test_a_stage_whose_table_is_missing_is_stale(monkeypatch, tmp_path):
    """Its side file recording the current state is not enough: without its table the stage is stale."""
    import shutil

    real = derived.table_path
    shutil.copy(real("schemes").with_suffix(".json"), tmp_path / "schemes.json")
    monkeypatch.setattr(derived, "table_path", lambda name, root=None: tmp_path / "schemes.jsonl"
                        if name == "schemes" else real(name, root))
    assert derived.side("schemes")["state"] == derived.state("schemes")
    assert derived.stale() == ["schemes"]


def test_checking_one_stage_reads_only_its_inputs(monkeypatch):
    """``check("calibration")`` (a first frontier's) digests the calibration's inputs, not every stage's."""
    seen = []
    real = derived.state
    monkeypatch.setattr(derived, "state", lambda name: seen.append(name) or real(name))
    derived.check("calibration")
    assert seen == ["calibration"]
