"""What a chapter shows: a table's HTML depends on what it displays, never on unseen last bits."""

import polars as pl

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
