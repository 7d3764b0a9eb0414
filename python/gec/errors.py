"""The exceptions gec raises.

Every failure gec reports (a bad or unsupported model, a corrupted ``.gom``
file, an input of the wrong dtype or shape, a missing or unknown input or
output name, a bad option) is a :class:`GecError`. Its ``code`` is gec's error
code (:class:`ErrorCode`, the C++ ``gec::ErrorCode``) and its message names
what is wrong and where (the input, node, file or option). Each code has its
own subclass, which also derives from the built-in exception a Python user
would expect, so ``except ValueError`` keeps working for code ported from
ONNX Runtime.
"""

import enum


class ErrorCode(enum.Enum):
    """gec's error codes; the values are those of the C++ ``gec::ErrorCode``."""

    INVALID_ARGUMENT = 0  #: the caller passed something wrong (input, dtype, shape, name, option)
    INVALID_MODEL = 1  #: the ONNX model is malformed or rejected by the ONNX checker
    UNSUPPORTED = 2  #: op, opset, dtype or feature gec does not implement
    CORRUPT_FILE = 3  #: a .gom file is truncated, fails its checksum or has a newer format
    IO = 4  #: a file cannot be read or written
    INTERNAL = 5  #: a bug in gec


class GecError(Exception):
    """Base of every gec exception.

    Attributes:
        code (ErrorCode): gec's error code.
        message (str): the one-line message (also ``str(error)``).
    """

    code = None

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = ErrorCode(code)


class InvalidArgument(GecError, ValueError):
    """An input of the wrong dtype or shape, a missing, unknown or duplicated
    input or output name, a bad option (code ``INVALID_ARGUMENT``)."""

    code = ErrorCode.INVALID_ARGUMENT


class InvalidModel(GecError, ValueError):
    """The ONNX model does not parse or the ONNX checker rejects it
    (code ``INVALID_MODEL``)."""

    code = ErrorCode.INVALID_MODEL


class Unsupported(GecError, NotImplementedError):
    """An op, opset, dtype or feature gec does not implement; the message
    names the node, op type, domain, opset and input dtypes
    (code ``UNSUPPORTED``)."""

    code = ErrorCode.UNSUPPORTED


class CorruptFile(GecError, ValueError):
    """A ``.gom`` file is truncated, fails its checksum or has a newer format
    version (code ``CORRUPT_FILE``)."""

    code = ErrorCode.CORRUPT_FILE


class IoError(GecError, OSError):
    """A file cannot be opened, read or written (code ``IO``)."""

    code = ErrorCode.IO


class InternalError(GecError, RuntimeError):
    """A bug in gec (code ``INTERNAL``); please report it with the message."""

    code = ErrorCode.INTERNAL


#: The exception class raised for each ErrorCode (the binding uses this table).
BY_CODE = {
    ErrorCode.INVALID_ARGUMENT: InvalidArgument,
    ErrorCode.INVALID_MODEL: InvalidModel,
    ErrorCode.UNSUPPORTED: Unsupported,
    ErrorCode.CORRUPT_FILE: CorruptFile,
    ErrorCode.IO: IoError,
    ErrorCode.INTERNAL: InternalError,
}
