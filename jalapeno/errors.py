"""Errors raised by the package. Each names the bad value and, where there is a closed set, the valid choices."""

from __future__ import annotations


class JalapenoError(ValueError):
    """Base class of every error the package raises on bad input."""


class DataError(JalapenoError):
    """A data file is malformed: the message names the file, the line, the column and the bad value."""


class UnknownNameError(JalapenoError, KeyError):
    """An unknown chip, model, claim or parameter name; the message lists the valid names."""

    def __init__(self, kind: str, name: object, valid: list[str] | tuple[str, ...]):
        self.kind, self.name, self.valid = kind, name, list(valid)
        plural = kind[:-2] + "es" if kind.endswith("is") else kind + ("es" if kind.endswith("s") else "s")
        super().__init__(f"unknown {kind} {name!r}; valid {plural}: {', '.join(self.valid)}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class ParameterError(JalapenoError):
    """A notebook parameter has a bad name, type or value."""


class BuildError(JalapenoError):
    """The book could not be built; the message says which step and notebook failed."""
