"""Raw array views for the compiled engine's loop: no reference count, no negative indices.

:func:`raw` gives a view of an array's memory that numba does not reference-count (numba counts
references to every array a function holds — an atomic increment and decrement per use, most of
the cost of a kernel that touches a dozen arrays per event — while a view of raw memory has no
count to keep; the engine holds the arrays themselves for the whole run).

The view's type, :class:`RawArray`, is a NumPy array type in every respect but one: an integer
index is taken as it is, never as counted from the end.  Numba, like Python, reads ``a[-1]`` as
the last element, which costs a compare and a select on every index it cannot prove
non-negative — on every access of the loop, whose indices (port, queue, packet, event ids) are
read from arrays.  The loop never indexes from the end (a negative id means "none", and is
tested before use), so its views skip that step: the 8x8x8 OFR credit bench case ran 1.18x as
fast without it (docs/performance.md).  Numba's own remedy is an unsigned index; this keeps
the kernel's indices the signed integers they are.  Slices of a view, and indices other than
integers, are plain arrays with NumPy's rules.  With numba's bounds checking on
(``NUMBA_BOUNDSCHECK=1``, and an empty cache), an index below zero or past the end raises
``IndexError``: the way to show that the loop never makes one.

>>> import numpy as np
>>> from numba import njit
>>> @njit
... def bump(a):
...     r = raw(a)
...     r[1, 2] += 5
...     return r[1, 2], r.shape[0], r[0, :2].sum()
>>> bump(np.arange(6).reshape(2, 3))
(10, 2, 1)
"""

from __future__ import annotations

import operator

from numba import types
from numba.core import cgutils
from numba.core.datamodel import models, register_default
from numba.core.imputils import impl_ret_borrowed, lower_builtin
from numba.extending import intrinsic
from numba.np import arrayobj


class RawArray(types.Array):
    """A C-contiguous array whose integer indices are never negative (module docstring)."""

    def __init__(self, dtype, ndim):
        super().__init__(dtype, ndim, "C", name=f"raw({dtype}, {ndim}d)")

    @property
    def key(self):
        return self.dtype, self.ndim

    def __repr__(self):
        # not Array's: a type that names its fields by repr (a StructRef) must tell the two apart
        return self.name


register_default(RawArray)(models.ArrayModel)


@intrinsic
def raw(typingctx, a):
    """A :class:`RawArray` view of C-contiguous array ``a`` (no meminfo: not counted)."""
    if not isinstance(a, types.Array) or a.layout != "C":
        return None
    view = RawArray(a.dtype, a.ndim)

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, args[0])
        dst = context.make_array(view)(context, builder)
        arrayobj.populate_array(dst, data=src.data, shape=src.shape, strides=src.strides,
                                itemsize=src.itemsize, meminfo=None)
        return dst._getvalue()
    return view(a), codegen


def _one_element(aryty, index_type):
    """Whether the index names one element: an integer per dimension (else a slice, a row,
    ..., which NumPy's rules take)."""
    members = index_type.types if isinstance(index_type, types.BaseTuple) else (index_type,)
    return len(members) == aryty.ndim and all(isinstance(t, types.Integer) for t in members)


def _element_pointer(context, builder, aryty, ary, index_type, index):
    ary = context.make_array(aryty)(context, builder, ary)
    if isinstance(index_type, types.BaseTuple):
        values = cgutils.unpack_tuple(builder, index, count=len(index_type))
        members = index_type.types
    else:
        values, members = [index], [index_type]
    inds = [context.cast(builder, v, t, types.intp) for v, t in zip(values, members)]
    return cgutils.get_item_pointer2(context, builder, ary.data,
                                     cgutils.unpack_tuple(builder, ary.shape),
                                     cgutils.unpack_tuple(builder, ary.strides), aryty.layout,
                                     inds, wraparound=False,
                                     boundscheck=context.enable_boundscheck)


@lower_builtin(operator.getitem, RawArray, types.Integer)
@lower_builtin(operator.getitem, RawArray, types.BaseTuple)
def raw_getitem(context, builder, sig, args):
    aryty, index_type = sig.args
    if not _one_element(aryty, index_type):
        if isinstance(index_type, types.BaseTuple):
            return arrayobj.getitem_array_tuple(context, builder, sig, args)
        return arrayobj.getitem_arraynd_intp(context, builder, sig, args)
    ptr = _element_pointer(context, builder, aryty, args[0], index_type, args[1])
    value = arrayobj.load_item(context, builder, aryty, ptr)
    return impl_ret_borrowed(context, builder, sig.return_type, value)


@lower_builtin(operator.setitem, RawArray, types.Integer, types.Any)
@lower_builtin(operator.setitem, RawArray, types.BaseTuple, types.Any)
def raw_setitem(context, builder, sig, args):
    aryty, index_type, value_type = sig.args
    if not _one_element(aryty, index_type):
        return arrayobj.setitem_array(context, builder, sig, args)
    ptr = _element_pointer(context, builder, aryty, args[0], index_type, args[1])
    value = context.cast(builder, args[2], value_type, aryty.dtype)
    arrayobj.store_item(context, builder, aryty, value, ptr)
    return context.get_dummy_value()
