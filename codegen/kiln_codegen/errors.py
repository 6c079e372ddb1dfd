"""Errors that point at a line of the registry."""
import re

_LINE_REF = re.compile(r"\{line:(\d+)\}")


class RegistryError(Exception):
    def __init__(self, line, message, hint=None):
        super().__init__(message)
        self.line = line
        self.message = message
        self.hint = hint

    def format(self, where):
        """where: loader.Sources (FILE:LINE in the file the line is in) or one file's name.
        A hint may name another line as {line:N}."""

        def at(line):
            return where.at(line) if hasattr(where, "at") else f"{where}:{line}"

        text = f"{at(self.line)}: {self.message}"
        if self.hint:
            text += "\n  hint: " + _LINE_REF.sub(lambda m: at(int(m.group(1))), self.hint)
        return text


class ErrorList(Exception):
    """All validation errors of one run, reported together."""

    def __init__(self, errors):
        super().__init__(f"{len(errors)} error(s)")
        self.errors = errors
