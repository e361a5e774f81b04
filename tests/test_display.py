"""The one display rule (jalapeno.display): hand-worked cases, and every stored output held to it."""

import json
import re
from pathlib import Path

import polars as pl
import pytest

from jalapeno import display

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


@pytest.mark.parametrize("value, digits, rounded", [
    (4522350648007934.0, 5, 4.5224e15),   # the roofline's attainable FLOP/s (issue: 16 digits stored)
    (0.000123456789, 5, 0.00012346),
    (-26.500606918108055, 5, -26.501),
    (151.39588810206874, 3, 151.0),
    (0.0, 5, 0.0),
])
def test_significant_hand_worked(value, digits, rounded):
    assert display.significant(value, digits) == rounded


@pytest.mark.parametrize("value, most, digits", [(281.25, 4, 3), (281.2, 4, 4), (1.23455, 5, 4), (0.5, 5, 5)])
def test_stable_digits_hand_worked(value, most, digits):
    assert display.stable_digits(value, most) == digits


def test_rounded_touches_floats_only():
    spec = {"a": [4522350648007934.0, 7, True, "4522350648007934.0"], "b": {"c": 3174603.1746031744}}
    assert display.rounded(spec) == {"a": [4.5224e15, 7, True, "4522350648007934.0"], "b": {"c": 3174600.0}}


@pytest.mark.parametrize("value, fmt, text", [
    (520833.33, "{:,.0f}", "520,830"),     # chips per GW: a float keeps 5 significant digits
    (131072, "{:,}", "131,072"),           # an integer (tokens) is exact
    (0.123456789, "{}", "0.12346"),
    (22.4999, "{:.0f}", "22"),             # rounded once, not 22.4999 -> 22.5 -> 22
    (281.25, "{:.1f}", "281"),             # exactly on a boundary (a ridge point): one digit less
    (23.49996, "{:.0f}", "23"),
    (-0.0001, "{:.1f}", "0.0"),            # never a signed zero
    (1.868, "{:.2f} ms", "1.87 ms"),
])
def test_formatted_hand_worked(value, fmt, text):
    assert display.formatted(value, fmt) == text


@pytest.mark.parametrize("value, fmt, text", [
    (22.5, "{:.0f}", "20"),                # within noise of a boundary: one digit less
    (22.4, "{:.0f}", "22"),
    (123456.7, "{:.0f}", "123460"),        # and never more than five significant digits
])
def test_formatted_with_noise(value, fmt, text):
    assert display.formatted(value, fmt, noise=display.FIT_NOISE) == text


def test_formatted_with_noise_refuses_a_free_format():
    with pytest.raises(ValueError, match="must hold one field with a precision"):
        display.formatted(1.5, "{} %", noise=display.FIT_NOISE)


@pytest.mark.parametrize("value, text", [
    (20260825, "20,260,825"), (47185920, "47,185,920"),   # integers exact (bytes of a message)
    (47185920.0, "47,186,000"), (1234.5678, "1,235"), (0.000123456, "0.0001235"), (12.346, "12.35"),
    (0.0008133, "0.0008133"), (1.766e-05, "< 0.0001"), (-7.9e-07, "> −0.0001"),  # a bound below 1e-4
    (4.5224e15, "4.522 × 10¹⁵"),   # powers of ten from 1e15, never 4.522e+15
    (12.345, "12.3"), (281.25, "281"),   # on a rounding boundary: a digit last bits decide is not shown
    (3.0, "3"), (None, ""),
])
def test_cell_hand_worked(value, text):
    assert display.cell(value) == text


@pytest.mark.parametrize("text, reader", [
    ("not 3.6^50 = 6.5e+27x", "not 3.6^50 = 6.5 × 10²⁷x"), ("1.234e-04 s", "1.234 × 10⁻⁴ s"),
    ("-2e+10", "-2 × 10¹⁰"), ("1,235 and 2.5", "1,235 and 2.5"),
])
def test_scientific_writes_an_exponent_as_a_reader_does(text, reader):
    assert display.scientific(text) == reader


@pytest.mark.parametrize("text, n", [("4,522,400", 5), ("0.0012", 2), ("4.5224e+15", 5),
                                     ("4522400000000000.0", 5), ("P95", 2), ("none", 0), ("-26.501", 5)])
def test_significant_digits(text, n):
    assert display.significant_digits(text) == n


# ---- every stored output ---------------------------------------------------------------------------
# A float in a stored output is a number written with a decimal point or an exponent; in chart data
# (JSON) every float is one. Integers (counts, bytes, run ids) are exact and not counted here.
_FLOAT = re.compile(r"(?<![\w.#-])-?\d[\d,]*\.\d+(?:[eE][-+]?\d+)?(?![\w.])|(?<![\w.#-])-?\d(?:\.\d+)?[eE][-+]?\d+(?![\w.])")
_SCRIPT = re.compile(r"var spec=(\{.*?\});el\.innerHTML", re.S)


def _floats(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _floats(v)
    elif isinstance(value, list):
        for v in value:
            yield from _floats(v)
    elif isinstance(value, float):
        yield value


def _stored_outputs():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for i, c in enumerate(nb["cells"]):
            for o in c.get("outputs", []):
                for mime, v in o.get("data", {}).items():
                    yield f"{path.name} cell {i} {mime}", "".join(v) if isinstance(v, list) else str(v)


def test_no_stored_float_carries_more_than_five_significant_digits():
    """Every committed notebook output (prose quotes, tables, chart data): no float with more than
    :data:`jalapeno.display.DIGITS` significant digits."""
    bad, charts, checked = [], 0, 0
    for where, text in _stored_outputs():
        for spec in _SCRIPT.findall(text):
            charts += 1
            for x in _floats(json.loads(spec.replace("<\\/", "</"))):
                checked += 1
                if display.significant_digits(repr(x)) > display.DIGITS:
                    bad.append((where, repr(x)))
        for token in _FLOAT.findall(_SCRIPT.sub("", re.sub(r'(?:id|headers|class)="[^"]*"', "", text))):
            checked += 1
            if display.significant_digits(token) > display.DIGITS:
                bad.append((where, token))
    assert charts > 20 and checked > 1000, (charts, checked)  # the scan reads the charts and tables
    assert not bad, f"{len(bad)} stored floats with more than {display.DIGITS} significant digits: {bad[:10]}"


def test_no_float_in_a_built_sites_figure_data_or_numbers_carries_more_than_five_digits(built_book):
    """The files a built site adds beside the pages: every figure's CSV and ``numbers.json``."""
    bad, checked = [], 0
    files = sorted((built_book / "figures").glob("*.csv")) + [built_book / "numbers.json"]
    assert len(files) > 20
    for path in files:
        text = path.read_text()
        tokens = ([c for line in text.splitlines() for c in line.split(",") if _FLOAT.fullmatch(c)]
                  if path.suffix == ".csv" else _FLOAT.findall(text))
        for token in tokens:
            checked += 1
            if display.significant_digits(token) > display.DIGITS:
                bad.append((path.name, token))
    assert checked > 1000 and not bad, (checked, bad[:10])


def test_a_value_as_a_reader_writes_it():
    """Flags, empty values, texts, lists and parameters' numbers: never True, None, a quoted string or [...]."""
    assert [display.text(v) for v in (True, False, None, "gb200", ["gb200", "b200"], [[1024, 1024], [8192, 1024]],
                                      1.5, 1400.0, 1024)] == \
        ["yes", "no", "none", "gb200", "gb200, b200", "1,024/1,024, 8,192/1,024", "1.5", "1,400", "1,024"]


def test_a_table_shows_flags_and_lists_in_words(monkeypatch):
    from jalapeno.publish import notebook

    shown = []
    monkeypatch.setattr(notebook, "display", lambda html: shown.append(html.data))
    notebook.table(pl.DataFrame({"flag": [True, False], "chips": [["gb200", "b200"], ["jalapeno"]]}))
    assert ">yes<" in shown[0] and ">no<" in shown[0] and "gb200, b200" in shown[0]
    assert "True" not in shown[0] and "[" not in shown[0].split("</style>")[-1]


def test_a_column_of_seconds_or_bytes_reads_in_its_unit(monkeypatch):
    assert display.column_unit([1.388e-06, 2e-06]) == (1e6, "µs")
    assert display.column_unit([0.00069, 0.00187]) == (1e3, "ms")
    assert display.column_unit([1.03, 1.80]) == (1.0, "s")
    assert display.column_unit([0.0, None]) == (1.0, "s")
    # bytes in SI prefixes: the collectives' decode and prefill messages share a column in MB
    assert display.column_unit([5760, 4.719e7, 2.82e8], display.BYTE_UNITS) == (1e-6, "MB")
    assert display.column_unit([5760], display.BYTE_UNITS) == (1e-3, "kB")
    assert display.column_unit([512.0, 0.0], display.BYTE_UNITS) == (1.0, "B")
    assert display.column_unit([1.2e15], display.BYTE_UNITS) == (1e-15, "PB")
    from jalapeno.publish import notebook

    shown = []
    monkeypatch.setattr(notebook, "display", lambda html: shown.append(html.data))
    notebook.table(pl.DataFrame({"hop_latency_s": [1.388e-06, 2.5e-07]}))
    assert "hop latency (µs)" in shown[0] and ">1.388<" in shown[0] and "e-0" not in shown[0].split("</style>")[-1]
    notebook.table(pl.DataFrame({"message_bytes": [5760, 47185920]}))
    assert "message (MB)" in shown[1] and ">47.19<" in shown[1] and ">0.00576<" in shown[1]


@pytest.mark.parametrize("value, unit, text", [
    (2026, "year", "2026"), (2027, "fiscal year", "fiscal year 2027"), (20260825, "date (YYYYMMDD)", "25 August 2026"),
    (20260826.0, "date (YYYYMMDD)", "26 August 2026"), (1, "flag", "stated"), (0, "flag", "not stated"),
    (9.2e10, "USD", "92 billion USD"), (8.54e10, "USD", "85.4 billion USD"), (1.2e11, "params", "120 billion params"),
    (1.2e12, "params", "1.2 trillion params"), (53.7, "x", "53.7x"), (38, "%", "38 %"), (5, "count", "5"),
    (44960.0, "tok/s/kW", "44,960 tok/s/kW"), (0.0012, "s", "0.0012 s"), ("GB300", "generation", "GB300 generation"),
])
def test_quantity_as_a_reader_writes_it(value, unit, text):
    assert display.quantity(value, unit) == text


def test_quantity_refuses_a_date_that_is_none():
    with pytest.raises(ValueError, match="20261325"):
        display.quantity(20261325, "date (YYYYMMDD)")


@pytest.mark.parametrize("value, digits, text", [
    (36.0, 3, "36"), (1.9012, 3, "1.9"), (1.748, 3, "1.75"), (671.026, 4, "671"), (1026.4, 4, "1,026"),
    (116.83, 4, "116.8"), (0.5, 3, "0.5"), (1.5, 4, "1.5"), (0.69, 4, "0.69"), (53.7, 4, "53.7"),
    (4.5e15, 4, "4.5 × 10¹⁵")])
def test_a_cell_has_no_padded_zeros(value, digits, text):
    assert display.cell(value, digits) == text


@pytest.mark.parametrize("value, text", [(53951.6, "53,952"), (12345.4, "12,345"), (447190.4, "447,190"),
                                         (1048576.3, "1,048,600"), (9999.44, "9,999")])
def test_a_cell_keeps_the_whole_digits_the_prose_shows_up_to_five(value, text):
    assert display.cell(value) == text  # four significant digits would show 53,950 beside the prose's 53,952
