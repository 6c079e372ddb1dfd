"""Errors that point at a line of ops.yaml."""


class RegistryError(Exception):
    def __init__(self, line, message, hint=None):
        super().__init__(message)
        self.line = line
        self.message = message
        self.hint = hint

    def format(self, path):
        text = f"{path}:{self.line}: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class ErrorList(Exception):
    """All validation errors of one run, reported together."""

    def __init__(self, errors):
        super().__init__(f"{len(errors)} error(s)")
        self.errors = errors
