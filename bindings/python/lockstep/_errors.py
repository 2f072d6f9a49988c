"""The exceptions lockstep raises, one class per error kind of the engine (docs/errors.md).

Each is a ``lockstep.Error`` and also the built-in exception that fits, so ``except ValueError``
catches a bad argument as it would for any Python library:

========================  ===========================  ======================================
kind                      class                        also a
========================  ===========================  ======================================
``argument``              ``ArgumentError``            ``ValueError``
``format``                ``FormatError``              ``ValueError``
``io``                    ``IoError``                  ``OSError``
``state``                 ``StateError``               ``RuntimeError``
``unavailable``           ``UnavailableError``         ``RuntimeError``
``resource``              ``ResourceError``            ``MemoryError``
``cancelled``             ``CancelledError``           ``RuntimeError``
``internal``              ``InternalError``            ``RuntimeError``
========================  ===========================  ======================================

Wrong Python types (a string where a tensor goes, a float64 array) raise ``TypeError``; Ctrl-C
during training or loading raises ``KeyboardInterrupt``. The message is the engine's own.
"""


class Error(Exception):
    """An error reported by lockstep's engine; ``kind`` names its kind (docs/errors.md)."""

    kind = "internal"


class ArgumentError(Error, ValueError):
    """A bad value, shape, name or option (kind ``argument``)."""

    kind = "argument"


class FormatError(Error, ValueError):
    """A file or byte buffer whose contents are not valid (kind ``format``)."""

    kind = "format"


class IoError(Error, OSError):
    """A file that could not be opened, read or written (kind ``io``)."""

    kind = "io"


class StateError(Error, RuntimeError):
    """A call that is wrong in the current state, e.g. a second backward through a freed graph
    or a NaN loss (kind ``state``)."""

    kind = "state"


class UnavailableError(Error, RuntimeError):
    """A device, plugin or driver that is not there (kind ``unavailable``)."""

    kind = "unavailable"


class ResourceError(Error, MemoryError):
    """Out of memory, or a size this platform cannot address (kind ``resource``)."""

    kind = "resource"


class CancelledError(Error, RuntimeError):
    """The caller asked to stop (kind ``cancelled``)."""

    kind = "cancelled"


class InternalError(Error, RuntimeError):
    """A failure inside lockstep that is not the caller's (kind ``internal``)."""

    kind = "internal"


BY_KIND = {cls.kind: cls for cls in (ArgumentError, FormatError, IoError, StateError, UnavailableError,
                                     ResourceError, CancelledError, InternalError)}
for _cls in (Error, *BY_KIND.values()):
    _cls.__module__ = "lockstep"
