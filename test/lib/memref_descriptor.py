"""A NumPy array as the memref descriptor compiled entry points take
(docs/CpuABI.md), with the array's own strides, for test scripts that call
an attnc shared library through ctypes."""
import ctypes


def descriptor(array):
    rank = array.ndim
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
              ("strides", ctypes.c_int64 * rank)]
    kind = type("MemRef", (ctypes.Structure,), {"_fields_": fields})
    return kind(array.ctypes.data, array.ctypes.data, 0,
                (ctypes.c_int64 * rank)(*array.shape),
                (ctypes.c_int64 * rank)(*[s // array.itemsize for s in array.strides]))
