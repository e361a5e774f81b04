"""The one display rule: how every number a stored output shows is written.

Prose quotes (:meth:`jalapeno.chapters.Chapter.quote`), table cells (:func:`cell`), chart data and the
figures' CSV files (:func:`rounded`, applied to a chart's whole spec) and ``numbers.json`` (the quotes'
texts) all go through this module:

- a **float** carries at most :data:`DIGITS` (5) significant digits, whatever its magnitude
  (``4522350648007934.0`` is shown as ``4.5224e+15``, or ``4,522,400,000,000,000`` where a format asks for
  a fixed point); a quote may choose fewer with its format (``"{:.1f}"``, ``"{:.2g}"``);
- an **integer** (a Python or numpy int: chip, byte and token counts derived from integer inputs) is
  exact, with every digit;
- an **identifier** (a run id, a hash) or a **date** is not a number: it is typed as text or a date
  before it reaches a table, and printed as it is;
- a digit that a relative change of :data:`DISPLAY_NOISE` (1e-11) would flip is never shown: a value on
  a rounding boundary (a ridge point of exactly 281.25 FLOP/byte, to four digits) is shown to one digit
  less (``281``), so no stored digit is decided by last bits;
- a **column name** in the package's style is shown in words with its unit (:func:`header`:
  ``jalapeno_tok_s_kw`` -> ``Jalapeño (tok/s/kW)``).

Five significant digits are more than a chart can draw (a pixel is about 1e-3 of an axis) or a reader
needs, and far above the last-bit noise that another CPU's floating-point path leaves in a
well-conditioned result (about 1e-16 relative), so a stored output is the same on any machine but for a
value within that noise of a rounding boundary. Where a value comes out of a numerical method whose
result moves more than that from machine to machine (a fit's hold-out refits, a Monte Carlo band), the
quote also passes ``noise``: a digit that noise could flip is not shown (:func:`formatted`).
"""

from __future__ import annotations

import math
import numbers
import re

#: Significant digits a displayed float keeps at most.
DIGITS = 5

#: Relative noise every displayed float survives: a digit that a change of this size would flip (a value
#: within it of a rounding boundary, such as a ridge point of exactly 281.25 FLOP/byte shown to four
#: digits) is not shown. Far above the last-bit noise of another CPU's floating-point path (about 1e-16
#: relative in a well-conditioned result) and the 1e-13 of the perturbation test, far below five digits.
DISPLAY_NOISE = 1e-11

#: Relative noise a quoted fit result must survive (``formatted(..., noise=FIT_NOISE)``): far above what a
#: last-bit change of the inputs (1e-12 relative) or another CPU's floating-point path moves a fitted
#: result, far below any digit the book prints.
FIT_NOISE = 1e-9

_FORMAT = re.compile(r"(?<!\{)\{:(,?)\.(\d+)([feg%])\}")
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*)?\.?\d+(?:[eE][-+]?\d+)?")


def plain(value: object) -> object:
    """numpy scalars and zero-dimensional arrays as Python numbers (``np.float64(1.5)`` and
    ``np.asarray(1.5)`` -> ``1.5``), anything else as it is: the package's one conversion of numpy numbers."""
    if (isinstance(value, numbers.Number) or getattr(value, "shape", None) == ()) and hasattr(value, "item"):
        return value.item()
    return value


def significant(x: float, digits: int = DIGITS) -> float:
    """``x`` rounded to ``digits`` significant digits (half to even on the decimal digits Python prints:
    ``significant(4522350648007934.0) == 4.5224e15``, ``significant(0.000123456789) == 0.00012346``).
    NaN, infinities and zero are returned as they are. ValueError for ``digits`` < 1."""
    if digits < 1:
        raise ValueError(f"significant: digits must be at least 1, got {digits}")
    if not math.isfinite(x) or x == 0.0:
        return x
    return float(f"{x:.{digits - 1}e}")


def stable_digits(x: float, most: int = DIGITS, noise: float = DISPLAY_NOISE) -> int:
    """The most significant digits, up to ``most``, to which ``x`` rounds the same at ``x (1 - noise)``
    and ``x (1 + noise)`` (at least 1): ``stable_digits(281.25, 4) == 3``, ``stable_digits(281.2, 4) == 4``."""
    d = most
    while d > 1 and significant(x * (1 - noise), d) != significant(x * (1 + noise), d):
        d -= 1
    return d


def rounded(value: object, digits: int = DIGITS) -> object:
    """``value`` (a number, or dicts and lists of them, such as a chart's Vega-Lite spec) with every float
    rounded to at most ``digits`` significant digits, fewer where :data:`DISPLAY_NOISE` could flip the last
    (:func:`stable_digits`); integers, booleans and text untouched."""
    value = plain(value)
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, digits) for v in value]
    if isinstance(value, float) and math.isfinite(value) and value != 0.0:
        return significant(value, stable_digits(value, digits))
    return value


def significant_digits(text: str) -> int:
    """How many significant digits the first number written in ``text`` carries: ``"4,522,400"`` -> 5,
    ``"0.0012"`` -> 2, ``"4.5224e+15"`` -> 5, ``"4522400000000000.0"`` -> 5 (zeros that only place the
    decimal point are not counted); 0 when ``text`` holds no number."""
    m = _NUMBER.search(text)
    if not m:
        return 0
    mantissa = m.group(0).replace(",", "").lower().split("e")[0].lstrip("+-")
    return len(mantissa.replace(".", "").strip("0"))


def formatted(value: object, fmt: str = "{}", noise: float = DISPLAY_NOISE) -> str:
    """The text of ``value`` under ``fmt`` after the display rule. An integer is formatted exactly. A
    float is rounded once, to what ``fmt`` asks or to :data:`DIGITS` significant digits, whichever is
    coarser: a format with a precision (``"{:,.1f} tok/s"``, ``"{:.3g}"``, ``"{:.2e}"``, ``"{:.1%}"``)
    loses a digit, and again, for as long as it would show more than :data:`DIGITS` (``"{:,.1f}"`` of
    44960.4 gives ``"44,960"``, ``"{:,.0f}"`` of 520833.3 gives ``"520,830"``); another format (``"{}"``,
    ``"{:g}"``) shows the value rounded to :data:`DIGITS` significant digits (``"{}"`` of 0.123456789 gives
    ``"0.12346"``). A negative float that prints as zero prints as zero (never a signed ``-0``).

    Either way a digit that ``noise`` decides is not shown: the format loses digits for as long as
    ``value x (1 ± noise)`` prints two ways (with ``.0f``, one digit less rounds to tens: ``22.5`` with
    ``"{:.0f}"`` gives ``"20"``), so a value within noise of a rounding boundary is quoted to a digit it
    cannot cross. The default is :data:`DISPLAY_NOISE` (last bits); a fit's result passes
    :data:`FIT_NOISE`. Above :data:`DISPLAY_NOISE` the format must have a precision: ValueError
    otherwise."""
    value = plain(value)
    if not isinstance(value, float):
        return fmt.format(value)
    m = _FORMAT.search(fmt)
    if m is None or not math.isfinite(value):
        if noise > DISPLAY_NOISE and math.isfinite(value):
            raise ValueError(f"formatted: with noise, format {fmt!r} must hold one field with a precision, "
                             "such as '{:.Nf}', '{:,.Nf}', '{:.Ne}', '{:.Ng}' or '{:.N%}'")
        text = fmt.format(rounded(value))
        return fmt.format(0.0) if value < 0 and text == fmt.format(-0.0) else text
    before = fmt[:m.start()].replace("{{", "{").replace("}}", "}")
    after = fmt[m.end():].replace("{{", "{").replace("}}", "}")
    comma, digits, kind = m.group(1), int(m.group(2)), m.group(3)
    spread = abs(value) * noise

    def show(x: float, d: int) -> str:
        if kind == "f" and d < 0:
            return f"{round(x, d):{comma}.0f}"
        return f"{x:{comma}.{d}{kind}}"

    lowest = 1 if kind == "g" else (-15 if kind == "f" else 0)
    while digits > lowest and (significant_digits(show(value, digits)) > DIGITS
                               or show(value - spread, digits) != show(value + spread, digits)):
        digits -= 1
    text = show(value, digits)
    if value < 0 and show(-value, digits) == show(0.0, digits):
        text = show(0.0, digits)
    return before + text + after


#: Below this magnitude a table cell shows a bound (``< 0.0001``), not digits: fixed point stops here.
SMALLEST_CELL = 1e-4

#: From this magnitude a table cell is written in powers of ten (``4.5 × 10¹⁵``), not in full.
LARGEST_CELL = 1e15

_EXPONENT = re.compile(r"(-?[0-9](?:\.[0-9]+)?)e([+-])0*([0-9]+)")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(text: str) -> str:
    """``text`` with every number in a computer's exponent form written as a reader writes it:
    ``6.5e+27x`` -> ``6.5 × 10²⁷x``, ``1.234e-04`` -> ``1.234 × 10⁻⁴``."""
    return _EXPONENT.sub(lambda m: f"{m.group(1)} × 10" + (("-" if m.group(2) == "-" else "") + m.group(3))
                         .translate(_SUPERSCRIPT), text)


def cell(value: object, digits: int = 4) -> str:
    """A number as a table cell: an integer exactly, with thousands separators (``1,048,576``); a float
    to ``digits`` significant digits (at most :data:`DIGITS`; fewer where :data:`DISPLAY_NOISE` could
    flip the last, :func:`stable_digits`: ``281.25`` -> ``281``), in fixed point with thousands separators
    (``47,186,000``, ``0.0001235``), as a bound below :data:`SMALLEST_CELL` (``< 0.0001``, ``> −0.0001``:
    a column that needs smaller numbers is shown in a smaller unit, :func:`column_unit`) and in powers
    of ten from :data:`LARGEST_CELL` (``4.5 × 10¹⁵``); None as an empty text. A whole-number float is
    shown without decimals, and no float with trailing zeros (``1.5``, not ``1.500``); one with more whole
    digits than ``digits`` to :data:`DIGITS` (``53,952``, as the prose quotes it, not ``53,950``). Never a
    computer's exponent form (``4.719e+07``)."""
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    most = min(digits, DIGITS)
    if 10 ** most <= abs(value) < LARGEST_CELL:  # whole digits are not rounded away to fewer than the prose shows
        most = DIGITS
    shown_digits = stable_digits(float(value), most) if value else 1
    x = significant(float(value), shown_digits)
    ax = abs(x)
    if ax and ax < SMALLEST_CELL:
        return f"< {SMALLEST_CELL:f}".rstrip("0") if x > 0 else f"> −{SMALLEST_CELL:f}".rstrip("0")
    if ax >= LARGEST_CELL:
        mantissa, exponent = f"{x:.{shown_digits - 1}e}".split("e")
        return scientific(f"{_unpadded(mantissa)}e{exponent}")
    if x.is_integer():
        return f"{x:,.0f}"
    places = max(shown_digits - 1 - int(math.floor(math.log10(ax))), 0) if ax else 0
    return _unpadded(f"{x:,.{places}f}")


def _unpadded(text: str) -> str:
    """A number's text without the zeros that end its decimal part: ``1.5``, not ``1.500``."""
    return text.rstrip("0").rstrip(".") if "." in text else text


#: Words for the powers of a thousand a reader writes a large count in (``92 billion USD``).
LARGE_WORDS = ((1e12, "trillion"), (1e9, "billion"))

#: The units :func:`quantity` writes in words round the number (a year, a date, a flag), not after it.
WORDED_UNITS = ("year", "fiscal year", "date (YYYYMMDD)", "flag")

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _as_written(x: float) -> str:
    """``x`` to at most :data:`DIGITS` significant digits, no trailing zeros, with thousands separators,
    never in exponent form (``53.7``, ``3,400``, ``0.25``)."""
    r = significant(x, DIGITS)
    if r.is_integer():
        return f"{int(r):,}"
    if abs(r) < 1e-4:  # a float's own text is in exponent form below 1e-4: the digits in fixed point instead
        return f"{r:.{DIGITS - 1 - math.floor(math.log10(abs(r)))}f}".rstrip("0")
    return f"{r:,}"


def quantity(value: object, unit: str = "") -> str:
    """A published value with its unit (a claim's ``value`` and ``unit`` of ``data/claims.csv``) as a reader
    writes it: a year as a year (``2026``, ``fiscal year 2027``), a date ``YYYYMMDD`` as a date
    (``25 August 2026``), a flag as ``stated`` / ``not stated``, a ratio with its ``x`` (``53.7x``), a
    count from a billion in words (``92 billion USD``, ``1.2 trillion params``), any other number to at
    most :data:`DIGITS` significant digits without trailing zeros, followed by its unit (``count`` shows
    none). A text is shown as it is.
    Raises ValueError for a date that is no ``YYYYMMDD``."""
    value = plain(value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        return " ".join(filter(None, (str(value), unit)))
    if unit in ("year", "fiscal year"):
        return f"{int(x)}" if unit == "year" else f"fiscal year {int(x)}"
    if unit == "date (YYYYMMDD)":
        digits = f"{int(x):08d}"
        year, month, day = int(digits[:4]), int(digits[4:6]), int(digits[6:])
        if not (1 <= month <= 12 and 1 <= day <= 31) or x != int(x):
            raise ValueError(f"{value!r} is not a date YYYYMMDD")
        return f"{day} {_MONTHS[month - 1]} {year}"
    if unit == "flag":
        return "stated" if x else "not stated"
    big = next(((f, w) for f, w in LARGE_WORDS if abs(x) >= f), None)
    shown = _as_written(x / big[0]) + f" {big[1]}" if big else _as_written(x)
    if unit == "x":
        return shown + "x"
    return " ".join(filter(None, (shown, "" if unit == "count" else unit)))


class number:
    """A number to write into a sentence under the display rule: ``f"{number(x):,.0f} tok/s"`` formats
    ``x`` as :func:`formatted` does (at most :data:`DIGITS` significant digits for a float, an integer
    exactly)."""

    __slots__ = ("value",)

    def __init__(self, value: object):
        self.value = value

    def __format__(self, spec: str) -> str:
        return formatted(self.value, "{:" + spec + "}" if spec else "{}")


#: The reader's names of the serving stacks and chip generations the data and the calibration key by
#: (``dynamo-trt``, ``cdna-4``): the projects' and vendors' own spellings.
NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trt": "TensorRT-LLM", "dynamo-trt": "Dynamo + TensorRT-LLM",
         "dynamo-sglang": "Dynamo + SGLang", "atom": "ATOM", "blackwell": "Blackwell", "hopper": "Hopper",
         "cdna-4": "CDNA 4", "cdna-3": "CDNA 3"}


def name(key: str) -> str:
    """The reader's name of a stack or generation key (:data:`NAMES`), the key itself when it has none."""
    return NAMES.get(key, key)


#: Words for the parts of a column name, the field's standard terms (a part not listed stays as it is).
TERMS = {"tpot": "TPOT", "ttft": "TTFT", "tbt": "TBT", "isl": "ISL", "osl": "OSL", "kv": "KV", "hbm": "HBM",
         "sram": "SRAM", "tp": "TP", "dp": "DP", "ep": "EP", "pp": "PP", "mla": "MLA", "gqa": "GQA", "moe": "MoE",
         "mfu": "MFU", "mbu": "MBU", "gpu": "GPU", "gpus": "GPUs", "lpu": "LPU", "lpus": "LPUs", "e2e": "E2E",
         "id": "ID", "mtp": "MTP", "pue": "PUE", "conc": "concurrency", "tput": "throughput", "jalapeno": "Jalapeño",
         "gb200": "GB200", "gb300": "GB300", "b200": "B200", "h100": "H100", "h200": "H200", "fp4": "FP4",
         "fp8": "FP8", "bf16": "BF16", "nvl72": "NVL72", "mi300x": "MI300X", "mi325x": "MI325X", "mi355x": "MI355X",
         "trt": "TRT", "allin": "all-in", "pct": "%", "n": "number of",
         "gb": "GB", "tb": "TB", "pb": "PB", "kw": "kW", "mw": "MW", "gw": "GW", "tdp": "TDP", "pflops": "PFLOP/s"}

#: Units a column name may end with (its last parts), as shown in a header: the longest match wins.
UNITS = {("tok", "s", "per", "kw"): "tok/s/kW", ("tok", "s", "kw"): "tok/s/kW", ("tok", "s", "user"): "tok/s/user", ("tok", "s", "chip"): "tok/s per chip",
         ("tok", "s", "gpu"): "tok/s per GPU", ("tok", "s", "mw"): "tok/s/MW", ("tok", "s"): "tok/s",
         ("bytes", "per", "s"): "B/s", ("flops", "per", "s"): "FLOP/s", ("flop", "per", "byte"): "FLOP/byte",
         ("tb", "s"): "TB/s", ("gb", "s"): "GB/s", ("pflop", "s"): "PFLOP/s", ("bytes",): "B", ("gb",): "GB",
         ("tb",): "TB", ("mb",): "MB", ("ms",): "ms", ("us",): "µs", ("s",): "s", ("w",): "W", ("kw",): "kW",
         ("mw",): "MW", ("pct",): "%", ("usd",): "USD", ("tokens",): "tokens", ("j",): "J", ("kwh",): "kWh",
         ("tasks", "per", "kwh"): "tasks/kWh", ("tb", "s", "per", "kw"): "TB/s per kW", ("gb", "per", "kw"): "GB per kW",
         ("pb", "per", "gw"): "PB per GW", ("pflops", "per", "kw"): "PFLOP/s per kW", ("us", "per", "layer"): "µs per layer"}


def text(value: object) -> str:
    """Any value as a reader writes it in a table cell or a parameter's value: ``yes`` / ``no`` for a
    flag, ``none`` for None, a text as it is (no quotes), a list or tuple as its items joined by ``, ``
    (each through this rule; ``[[1024, 1024], [8192, 1024]]`` -> ``1,024/1,024, 8,192/1,024``: an inner
    pair of numbers as ``a/b``), a number as it is written (``1,400``, ``0.25``, ``1e-06``: a parameter's
    value as given, :func:`formatted` with ``{:,g}``)."""
    value = plain(value)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join("/".join(text(x) for x in v) if isinstance(v, (list, tuple)) else text(v) for v in value)
    if isinstance(value, numbers.Number):
        return formatted(value, "{:,g}")
    return str(value)


#: The units a column of seconds is shown in, largest first: (factor from seconds, unit).
TIME_UNITS = ((1.0, "s"), (1e3, "ms"), (1e6, "µs"), (1e9, "ns"))

#: The units a column of bytes is shown in, largest first: (factor from bytes, unit), SI (decimal) prefixes
#: as the seeds and datasheets write them (1 MB = 1e6 B).
BYTE_UNITS = ((1e-15, "PB"), (1e-12, "TB"), (1e-9, "GB"), (1e-6, "MB"), (1e-3, "kB"), (1.0, "B"))

#: The unit of a table header (``(s)``, ``(B)``) that a column is shown scaled in, and its scale.
SCALED_UNITS = {"s": TIME_UNITS, "B": BYTE_UNITS}


def column_unit(values, units=TIME_UNITS) -> tuple[float, str]:
    """The unit of ``units`` (:data:`TIME_UNITS`, :data:`BYTE_UNITS`: largest first, factors from the SI
    unit) a column of ``values`` in the SI unit reads best in: the largest whose factor brings the column's
    largest magnitude to 1 or more (seconds ``[1.388e-06, 2e-06]`` -> ``(1e6, "µs")``; bytes
    ``[5760, 4.719e7]`` -> ``(1e-6, "MB")``); the SI unit itself for a column of zeros, NaNs or nothing."""
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v)) and v != 0]
    base = next(u for u in units if u[0] == 1.0)
    if not finite:
        return base
    top = max(finite)
    return next(((f, u) for f, u in units if top * f >= 1.0), units[-1])


def header(name: str) -> str:
    """A table header in words with its unit, from a column name in the package's style:
    ``jalapeno_tok_s_kw`` -> ``Jalapeño (tok/s/kW)``, ``batch1_step_ms`` -> ``batch1 step (ms)``,
    ``tpot_s`` -> ``TPOT (s)``. A name that is already words (a space, a capital, a symbol) is kept."""
    if not name.replace("_", "").isalnum() or "_" not in name and name.lower() not in TERMS:
        return name
    parts = name.split("_")
    unit = ""
    for n in range(min(4, len(parts)), 0, -1):
        if tuple(p.lower() for p in parts[-n:]) in UNITS:
            unit, parts = UNITS[tuple(p.lower() for p in parts[-n:])], parts[:-n]
            break
    words = " ".join(TERMS.get(p.lower(), p) for p in parts)
    return f"{words} ({unit})" if unit and words else unit or words
