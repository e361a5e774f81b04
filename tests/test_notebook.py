"""What a chapter shows: a table's HTML depends on what it displays, never on unseen last bits."""

import polars as pl

from jalapeno import display
from jalapeno.publish import notebook


def shown(df: pl.DataFrame, monkeypatch) -> str:
    out = []
    monkeypatch.setattr(notebook, "display", lambda obj: out.append(obj.data))
    notebook.table(df)
    return out[0]


def test_table_html_survives_last_bit_changes_and_follows_shown_values(monkeypatch):
    base = pl.DataFrame({"chip": ["gb200", "jalapeno"], "tok_s_kw": [44960.0, 2.4e6], "share": [0.123456, 0.5]})
    nudged = base.with_columns(pl.col("tok_s_kw") * (1 + 1e-12), pl.col("share") * (1 - 1e-12))
    html = shown(base, monkeypatch)
    assert 'id="tbl-' in html and "44,960" in html and "0.1235" in html
    assert shown(nudged, monkeypatch) == html
    moved = base.with_columns(pl.col("share") * 1.01)  # 0.1247 is shown: a new table
    assert shown(moved, monkeypatch) != html


def test_headers_are_words_with_units():
    assert display.header("jalapeno_tok_s_kw") == "Jalapeño (tok/s/kW)"
    assert display.header("tok_s_per_kw") == "tok/s/kW"
    assert display.header("batch1_step_ms") == "batch1 step (ms)"
    assert display.header("hbm_bandwidth_bytes_per_s") == "HBM bandwidth (B/s)"
    assert display.header("interactivity_tok_s_user") == "interactivity (tok/s/user)"
    assert display.header("effective_tasks_per_kwh") == "effective (tasks/kWh)"
    assert display.header("energy_accelerator_j") == "energy accelerator (J)"
    assert display.header("hbm_tb_s_per_kw") == "HBM (TB/s per kW)"
    assert display.header("n_chips") == "number of chips" and display.header("run_id") == "run ID"
    assert display.header("peak PFLOP/s") == "peak PFLOP/s" and display.header("chip") == "chip"
    # the caveats' HBM and power columns, the pareto constants: SI prefixes and units, never "gb per gw"
    assert [display.header(n) for n in ("hbm_gb_per_kw", "hbm_pb_per_gw", "stacks_per_gw", "pflops_per_kw",
                                        "tdp_w", "per_kw_at_peak", "tau_us_per_layer")] == \
        ["HBM (GB per kW)", "HBM (PB per GW)", "stacks per GW", "PFLOP/s per kW", "TDP (W)", "per kW at peak",
         "tau (µs per layer)"]


def test_a_table_shows_its_worded_headers_and_dashes_for_empty_cells(monkeypatch):
    html = shown(pl.DataFrame({"tpot_ms": [1.868, None], "chip": ["gb200", "jalapeno"]}), monkeypatch)
    assert ">TPOT (ms)</th>" in html and ">tpot_ms<" not in html
    assert "—" in html and html.startswith('<div class="jalapeno-table">')


def test_a_chapter_table_is_shown_under_its_caption(monkeypatch):
    from jalapeno.chapters import Chapter
    from jalapeno.errors import UnknownNameError
    import pytest

    ch = Chapter()
    ch.add_table("ridges", pl.DataFrame({"chip": ["gb200"], "ridge_flop_per_byte": [1250.0]}),
                 "Ridge point of each chip at FP4")
    out = []
    monkeypatch.setattr(notebook, "display", lambda obj: out.append(obj.data))
    notebook.table(ch, "ridges")
    assert "Ridge point of each chip at FP4" in out[0] and "gt_title" in out[0] and "1,250" in out[0]
    notebook.table(ch.tables["ridges"])  # the same table without its caption: another id
    assert "Ridge point of each chip" not in out[1] and out[1].split('id="')[1][:16] != out[0].split('id="')[1][:16]
    with pytest.raises(UnknownNameError, match="ridge.*valid table slots: ridges"):
        notebook.table(ch, "ridge")
    with pytest.raises(ValueError, match="caption"):
        ch.add_table("bounds", pl.DataFrame({"a": [1]}), " ")
