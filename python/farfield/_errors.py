"""Exceptions of the farfield package.

Every failure the library reports carries its C status code (``FARFIELD_ERR_*`` of
``include/farfield.h``, all >= 100) and its message, which names the argument, the index or
the limit concerned.
"""

__all__ = ["FarfieldError", "InvalidArgumentError", "NufftError"]

# status codes whose cause is the caller's input (farfield::Error variants NullPointer,
# InvalidArg, Dim, Type, Modes, Tol, NPoints, NonFinite, NoPoints, Range)
_INPUT_CODES = {101, 102, 103, 104, 106, 107, 108, 109, 111, 114}


class FarfieldError(RuntimeError):
    """A farfield call failed. ``code``: the library's status code (``FARFIELD_ERR_*``, or a
    FINUFFT ``ier`` for :class:`NufftError`); ``str(e)``: the library's message."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


class InvalidArgumentError(FarfieldError, ValueError):
    """A farfield call rejected its input (an argument out of range, a non-finite value, sizes
    beyond the limits): both a :class:`FarfieldError` and a ``ValueError``."""


class NufftError(FarfieldError):
    """A failure of ``farfield.nufft`` with FINUFFT's status code ``ier`` as ``code`` (a
    ``RuntimeError``, as FINUFFT's Python package raises); the message is FINUFFT's text for
    the code followed by farfield's detail."""


# FINUFFT 2.5's status codes (its header finufft_errors.h, shared by cuFINUFFT) and their texts
_FINUFFT_TEXT = {
    1: "FINUFFT eps tolerance too small to achieve",
    2: "FINUFFT malloc size requested greater than MAX_NF",
    3: "FINUFFT spreader fine grid too small compared to kernel width",
    4: "FINUFFT spreader nonuniform point out of range [-pi, pi)^d [DEPRECATED]",
    5: "FINUFFT spreader malloc error",
    6: "FINUFFT spreader illegal direction (must be 1 or 2)",
    7: "FINUFFT opts.upsampfac not > 1.0",
    8: "FINUFFT opts.upsampfac not a value with known Horner polynomial rule",
    9: "FINUFFT number of transforms ntrans invalid",
    10: "FINUFFT transform type invalid",
    11: "FINUFFT general malloc failure",
    12: "FINUFFT number of dimensions dim invalid",
    13: "FINUFFT spread_thread option invalid",
    14: "FINUFFT invalid mode array (negative mode count)",
    15: "cuFINUFFT CUDA failure",
    16: "FINUFFT plan not valid",
    17: "cuFINUFFT spreading method not valid",
    18: "cuFINUFFT bin size not valid",
    19: "cuFINUFFT insufficient shared memory",
    20: "FINUFFT number of nonuniform points invalid",
    21: "FINUFFT invalid argument",
    22: "FINUFFT fftw lock functions must both be set or both be unset",
    23: "FINUFFT number of threads not valid",
    24: "FINUFFT spread_kerformula option invalid",
    25: "FINUFFT unknown exception",
}


def _farfield_error(code, message):
    """The exception for farfield status ``code`` with ``message`` (called by the native module)."""
    cls = InvalidArgumentError if code in _INPUT_CODES else FarfieldError
    return cls(message, code)


def _finufft_error(ier, detail):
    """The exception for FINUFFT status ``ier`` with farfield's ``detail`` (native module)."""
    text = _FINUFFT_TEXT.get(ier, "Unknown error")
    return NufftError(f"{text}: {detail}" if detail else text, ier)
