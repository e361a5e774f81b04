"""Errors raised by the package. Each names the bad value and, where there is a closed set, the valid choices."""

from __future__ import annotations

#: Longest text of a value an error message prints (:func:`shown`): a huge input is never printed whole.
SHOWN_CHARS = 80


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters (``...`` and the full length
    added when cut). Never fails: an integer too long for ``repr`` is shown by its digit count."""
    try:
        text = repr(value)
    except ValueError:  # an int beyond Python's digit limit for str()
        return f"<an integer of about {value.bit_length() * 0.30103:.0f} digits>"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


class JalapenoError(ValueError):
    """Base class of every error the package raises on bad input."""


class DataError(JalapenoError):
    """A data file is malformed: the message names the file, the line, the column and the bad value."""


#: Kinds of name whose plural is the word itself ("valid measured hardware: ...").
UNCOUNTABLE = ("hardware", "data")


class UnknownNameError(JalapenoError, KeyError):
    """An unknown chip, model, claim or parameter name; the message lists the valid names (and, with
    ``where``, says where the name was given, such as ``parameter 'chips'``)."""

    def __init__(self, kind: str, name: object, valid: list[str] | tuple[str, ...], where: str = ""):
        self.kind, self.name, self.valid = kind, name, list(valid)
        plural = (kind if kind.endswith(UNCOUNTABLE) else kind[:-2] + "es" if kind.endswith("is")
                  else kind + ("es" if kind.endswith("s") else "s"))
        super().__init__(f"{where + ': ' if where else ''}unknown {kind} {shown(name)}; valid {plural}: "
                         f"{', '.join(self.valid)}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class ParameterError(JalapenoError):
    """A notebook parameter has a bad name, type or value."""


class CostError(JalapenoError):
    """A computation that its inputs size is above the package's stated limit for it (configurations of
    the serving evaluator, chips and links of a searched fabric graph); the message gives the size and the
    limit."""


class BuildError(JalapenoError):
    """The book could not be built; the message says which step and notebook failed."""
