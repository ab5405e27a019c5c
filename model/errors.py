"""What icsim's errors share: they cross a process boundary whole.

An error that keeps fields of its own and takes other constructor arguments than its message
(``ConfigError(path, reason)``, ``TraceError(path, line, reason)``, a deadlock's cycle) cannot
be rebuilt by Python's default pickling, which calls the class with ``args`` alone.  Raised in a
worker process (a sweep's or a reproduction's pool), such an error came back as
``BrokenProcessPool`` instead of the one line it carries.  :class:`Picklable` rebuilds it from
its ``args`` and fields without calling ``__init__``:

>>> import pickle
>>> from icsim.model.config import ConfigError
>>> err = pickle.loads(pickle.dumps(ConfigError("traffic.load", "must be >= 0")))
>>> type(err).__name__, str(err), err.path
('ConfigError', 'traffic.load: must be >= 0', 'traffic.load')
"""

from __future__ import annotations

from typing import Any


def _rebuild(cls: type[BaseException], args: tuple, fields: dict[str, Any]) -> BaseException:
    err = cls.__new__(cls, *args)
    err.args = args
    err.__dict__.update(fields)
    return err


class Picklable:
    """Mixin for an exception class with a constructor of its own: pickled as its class, its
    ``args`` and its fields."""

    def __reduce__(self) -> tuple:
        return _rebuild, (type(self), self.args, self.__dict__)
