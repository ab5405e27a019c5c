"""The speed machinery of the compiled engine: rows asked for ahead of use (``prefetch``, LLVM's
prefetch intrinsic) and division by multiplication (``divide``: ids and times divided by a
run's constants without a hardware division), both measured in docs/performance.md.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


# ============================================================================= prefetching
def _prefetch(context, builder, aty, ary, idx):
    """Emit ``llvm.prefetch`` (read, keep in all cache levels) of the element ``idx`` of the
    array value ``ary`` of numba type ``aty``."""
    ptr = cgutils.get_item_pointer(context, builder, aty, context.make_array(aty)(context, builder,
                                                                                  ary), idx)
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = builder.module.declare_intrinsic(         # named for the pointer type (p0 or p0i8)
        "llvm.prefetch", [i8p], ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
    builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])


@intrinsic
def prefetch(typingctx, a, i):
    """Ask the CPU to bring row i of array ``a`` into cache (``llvm.prefetch``, x86
    ``prefetcht0``), without waiting for it."""
    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        zero = context.get_constant(types.intp, 0)
        _prefetch(context, builder, aty, args[0], [args[1]] + [zero] * (aty.ndim - 1))
        return context.get_dummy_value()
    return types.void(a, types.intp), codegen


@intrinsic
def prefetch_cell(typingctx, a, i, j):
    """:func:`prefetch` for the line that holds ``a[i, j]`` (a row of several lines)."""
    def codegen(context, builder, signature, args):
        _prefetch(context, builder, signature.args[0], args[0], [args[1], args[2]])
        return context.get_dummy_value()
    return types.void(a, types.intp, types.intp), codegen


# ============================================================================= division
def inverse(d: int) -> int:
    """The multiplier :func:`divide` uses for the divisor d, as ``prm`` keeps it after d:
    ``ceil(2**63 / d)``, an unsigned 64-bit number stored as the int64 of its bits."""
    m = -(-(1 << 63) // d)
    return m - (1 << 64) if m >= 1 << 63 else m


@intrinsic
def mul_shr63(typingctx, x, m):
    """``(x * m) >> 63`` for x >= 0 and m read as unsigned, the product in 128 bits (x86: one
    ``mul`` and a shift)."""
    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        return builder.trunc(builder.lshr(p, ir.Constant(i128, 63)), ir.IntType(64))
    return types.int64(types.int64, types.int64), codegen


@njit(cache=True, forceinline=True)
def divide(prm, x, k):
    """``x // prm[k]`` for ``x >= 0`` by a multiplication: ``prm[k + 1]`` holds
    ``M = ceil(2**63 / d)`` (:func:`inverse`), and ``(x * M) >> 63`` is ``x // d`` whenever
    ``x * d < 2**63`` (with ``e = M * d - 2**63 < d``, ``x * M / 2**63 = x / d + x * e /
    (d * 2**63)``, and the second term is below ``1 / d``).  The loop divides on every event
    (a time in ps by the cycle, a port or queue id by the ports or VCs per router), and a
    64-bit integer division takes 40-90 cycles on Intel cores before Ice Lake; the product
    takes a few.  Past that range (a time of 2**63 / d ps), it divides."""
    d = prm[k]
    if mul_shr63(x, d):
        return x // d
    return mul_shr63(x, prm[k + 1])
