"""Frozen fact classes: a view's parts are computed in their constructor and never change after."""


class FrozenError(AttributeError):
    """An attribute was set on a view (or one of its parts) after it was built."""


class Frozen:
    """A class whose __init__ sets its attributes and ends with self._freeze(): any later
    assignment or deletion raises FrozenError, so that every fact a template reads is computed
    in one place, before rendering starts."""

    def _freeze(self):
        object.__setattr__(self, "_frozen", True)

    def __setattr__(self, name, value):
        if self.__dict__.get("_frozen"):
            raise FrozenError(f"{type(self).__name__}.{name}: a view is immutable once built")
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if self.__dict__.get("_frozen"):
            raise FrozenError(f"{type(self).__name__}.{name}: a view is immutable once built")
        object.__delattr__(self, name)
