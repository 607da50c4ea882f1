"""Let the habitat-sim 0.2.2 wheel's pybind11 2.9.2 bindings convert NumPy 2 arrays (servicerobot's own fix).

pybind11 2.9.2 calls NumPy's C API through the table NumPy exports (`numpy._core._multiarray_umath._ARRAY_API`)
at the positions NumPy 1 used. NumPy 2 moved `PyArray_CopyInto` from position 82 to 50 and leaves 82 empty,
so the first list -> Eigen conversion in habitat_sim (`spec.resolution = [h, w]`) calls a null pointer and the
process dies. `patch()` copies the function pointer at 50 into the empty 82 (the table's page is read-only:
it is opened for the write and closed again). Python 3.13 has no NumPy 1, so this is needed; it must run before
habitat_sim converts anything, which `install()` arranges: it patches when `habitat_sim` is first imported.
"""

from __future__ import annotations

import ctypes
import os
import sys

OLD_POSITION, NEW_POSITION = 82, 50  # PyArray_CopyInto in NumPy 1 and in NumPy 2


def patch() -> bool:
    """Fill position 82 of NumPy's C-API table; False when there is nothing to do (NumPy 1, or done)."""
    import numpy

    if int(numpy.__version__.split(".")[0]) < 2:
        return False
    from numpy._core import _multiarray_umath

    capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    capsule_pointer.restype = ctypes.c_void_p
    capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    table_address = capsule_pointer(_multiarray_umath._ARRAY_API, None)
    slots = (ctypes.c_void_p * (OLD_POSITION + 1)).from_address(table_address)
    if slots[OLD_POSITION]:
        return False
    if not slots[NEW_POSITION]:
        raise RuntimeError(f"NumPy {numpy.__version__}: its C-API table has no PyArray_CopyInto at {NEW_POSITION}")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.mprotect.restype = ctypes.c_int
    page = os.sysconf("SC_PAGE_SIZE")
    slot_address = table_address + OLD_POSITION * ctypes.sizeof(ctypes.c_void_p)
    first = slot_address - slot_address % page
    length = slot_address + ctypes.sizeof(ctypes.c_void_p) - first
    read, write = 1, 2
    if libc.mprotect(first, length, read | write):
        raise OSError(ctypes.get_errno(), "mprotect could not open NumPy's C-API table for writing")
    try:
        slots[OLD_POSITION] = slots[NEW_POSITION]
    finally:
        libc.mprotect(first, length, read)
    return True


class _OnHabitatImport:
    """A meta-path finder that patches once, when `habitat_sim` is first imported, then steps aside."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] == "habitat_sim":
            sys.meta_path.remove(cls)
            # no CUDA device here: with one looked for, habitat-sim 0.2.2 exits the process (a Magnum Fatal)
            os.environ.setdefault("HSIM_DISABLE_CUDA_DEVICE", "1")
            patch()


def install() -> None:
    """Run from the venv's servicerobot_habitat.pth at start-up: costs nothing until habitat_sim is imported."""
    if _OnHabitatImport not in sys.meta_path:
        sys.meta_path.insert(0, _OnHabitatImport)
