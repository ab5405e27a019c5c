"""Destination patterns: where the messages of a source go (docs/model.md §6, §5a.4).

A pattern answers one question per message: *the index-th message created by node ``src``
goes to which node?*  The engine builds one pattern per run with :func:`make_pattern` and calls
:meth:`Pattern.destination` once per message, passing the source's own random stream.

Definitions (``N`` nodes, ``b = log2 N``, node ``a`` with coordinates ``(x0, x1, ...)``,
``i`` the 0-based message index of the source):

============== ======= ======================================================================
name           torus?  destination
============== ======= ======================================================================
uniform        no      uniformly random node; excludes ``src`` unless ``include_self``
transpose      no      ``a = r + q*c  ->  c + q*r`` with ``q = sqrt(N)`` (index as a q x q matrix)
transpose3d    yes     coordinates rotated: ``dest[d] = src[(d + 1) mod n]``; equal sizes
butterfly/fft  no      ``a XOR 2**(i mod b)``; N a power of two
bitreverse     no      the b bits of ``a`` reversed; N a power of two
bitcomplement  no      ``(N - 1) XOR a``; N a power of two
shuffle        no      the b bits of ``a`` rotated left by one (``d_i = a_(i-1 mod b)``)
bitrotation    no      the b bits of ``a`` rotated right by one (``d_i = a_(i+1 mod b)``)
tornado        yes     every coordinate ``c -> (c + ceil(k/2) - 1) mod k``
neighbor       yes     the neighbour behind the ``(i mod P)``-th present port (P present ports)
permutation    no      a random permutation fixed at construction from ``seed``
hotspot        no      with probability ``fraction`` one of ``nodes``, else uniform without self
alltoall       no      ``(src + 1 + (i mod (N - 1))) mod N``
============== ======= ======================================================================

Conventions worth knowing
-------------------------
* Every pattern needs at least two nodes.
* Self-addressed messages happen where the definition makes them: the fixed points of
  transpose (q of them), transpose3d (k), bitreverse (the 2**ceil(b/2) palindromes), shuffle
  and bitrotation (nodes 0 and N - 1), a
  permutation built with ``derangement=False``, uniform with ``include_self`` and a hotspot
  source drawing itself.  As in the reference simulator they are legitimate messages that the
  router delivers locally.
* On a torus whose node count is a power of two every size is a power of two, and the index
  bits are the coordinates' bits with the first dimension lowest.  Butterfly then exchanges
  along one dimension and bitcomplement maps every coordinate ``c -> k - 1 - c``.
* ``alltoall`` counts messages from 0, so a source never addresses itself: messages
  ``0 .. N-2`` go to ``src+1, src+2, ..., src-1`` (docs/model.md §6's "step i to (s + i) mod
  N" with i counted from 1), then the cycle repeats.
* Coordinate patterns (transpose3d, tornado, neighbor) need a :class:`~icsim.model.topology.Torus`;
  they apply to mesh dimensions too, with the same coordinate arithmetic.

Determinism and speed
---------------------
``destination`` does O(1) work: a tuple lookup for fixed mappings, integer arithmetic for
butterfly and alltoall, and at most one ``rng.random()`` call for uniform and hotspot (a
single uniform double scaled to an index; a third of the cost of ``rng.integers``).  The same
seed and the same call sequence give the same answers.  Arguments of ``destination`` are not
checked (the hot path); ``src`` must lie in ``[0, N)`` and ``index`` be >= 0.
"""

from __future__ import annotations

import math
import numbers
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from icsim.model.config import ConfigError
from icsim.model.errors import Picklable
from icsim.model.input_files import InputFileError, read_lines
from icsim.model.registry import (RegistrationError, Registry, UnknownNameError, described,
                                  did_you_mean, load_file)
from icsim.traffic.rules import Rule

__all__ = ["PATTERNS", "Pattern", "PatternError", "load_plugin", "make_pattern", "register"]


class PatternError(Picklable, ValueError):
    """A pattern cannot be built: unknown name or parameter, bad value or failed precondition.

    The message starts with the pattern's name and says why; ``param`` names the parameter at
    fault, when one is (a config names it ``traffic.params.<pattern>.<param>``).
    """

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def admit(name: str, obj: Any) -> None:
    """Refuse (:class:`~icsim.model.registry.RegistrationError`) a pattern that is not a
    :class:`Pattern` subclass with a ``destination`` and class attributes of the right types,
    as it registers (a plug-in's mistake is one line naming its file)."""
    who = f"traffic pattern {name!r}"
    if not (isinstance(obj, type) and issubclass(obj, Pattern)):
        raise RegistrationError(f"{who}: registered {described(obj)}; register a subclass "
                                f"of icsim.traffic.patterns.Pattern")
    if not isinstance(obj.defaults, Mapping) or not all(isinstance(k, str)
                                                        for k in obj.defaults):
        raise RegistrationError(f"{who}: defaults is {described(obj.defaults)}, not a "
                                f"mapping of parameter names to default values")
    for flag in ("permutation", "needs_torus"):
        if not isinstance(getattr(obj, flag), bool):
            raise RegistrationError(f"{who}: {flag} is {described(getattr(obj, flag))}, not "
                                    f"True or False")
    if obj.destination is Pattern.destination:
        raise RegistrationError(f"{who}: gives no destination(src, index, rng)")


PATTERNS: Registry[type["Pattern"]] = Registry("traffic pattern",
                                               packages=("icsim.traffic.families",),
                                               admit=admit)


def register(name: str, *aliases: str) -> Callable[[type["Pattern"]], type["Pattern"]]:
    """Class decorator: enter a pattern in :data:`PATTERNS` under ``name`` and any aliases.

    ``name`` becomes the class's :attr:`Pattern.name`, the one used in error messages.
    """
    return PATTERNS.register(name, *aliases)


def load_plugin(path: str) -> Any:
    """Import a Python file that registers traffic patterns (``traffic.plugins``), once per
    process; ValueError naming the file when it cannot be read or fails on import."""
    return load_file(path, PATTERNS)


def make_pattern(name: str, topology: Any, *, seed: int, **params: Any) -> "Pattern":
    """Build the pattern registered as ``name`` on ``topology``, checking its preconditions.

    Parameters
    ----------
    name : str
        A key of :data:`PATTERNS` (an alias such as ``"fft"`` works too).
    topology : Torus or Graph
    seed : int
        Seed of the pattern's construction-time randomness (only ``permutation`` has any).
        Per-message randomness comes from the ``rng`` passed to ``destination``.
    **params
        The pattern's own parameters; unknown ones are an error.

    Raises
    ------
    PatternError
        Unknown name (the message lists the valid ones), unknown or invalid parameter, or a
        size/topology precondition that fails.

    Examples
    --------
    >>> from icsim.model.topology import Torus
    >>> p = make_pattern("tornado", Torus((8, 8)), seed=0)
    >>> p.destination(0, 0, None), p.permutation
    (27, True)
    >>> make_pattern("transpose", Torus((8, 8, 8)), seed=0)
    Traceback (most recent call last):
    ...
    icsim.traffic.patterns.PatternError: transpose: 8x8x8 has 512 nodes, not a perfect square
    """
    try:
        cls = PATTERNS.get(name)
    except UnknownNameError as exc:
        raise PatternError(str(exc)) from None
    return cls(topology, seed=seed, **params)


def guarded(pattern: "Pattern") -> "Pattern":
    """A plug-in's pattern held to what the engines need: its :meth:`~Pattern.rule` checked
    before the run (:meth:`~icsim.traffic.rules.Rule.check`; PatternError naming the
    pattern) and made once, and its :meth:`~Pattern.destination` checked as each message is
    made (a whole number in ``0 .. N - 1``; else, mid-run, a ConfigError naming
    ``traffic.pattern``, the source and the message).  A built-in pattern (a module of
    icsim) is returned as it is."""
    cls = type(pattern)
    if cls.__module__.startswith("icsim."):
        return pattern
    name, n = pattern.name, pattern.num_nodes
    rule = pattern.rule()
    if rule is not None:
        if not isinstance(rule, Rule):
            raise PatternError(f"{name}: rule() returned {described(rule)}, not a Rule (or "
                               f"None: destinations in Python only)")
        try:
            rule.check(n)
        except ValueError as exc:
            raise PatternError(f"{name}: rule() gave a {rule.kind} rule: {exc}") from None
    destination = pattern.destination

    def checked(src: int, index: int, rng: Any) -> int:
        dst = destination(src, index, rng)
        if not _is_int(dst) or not 0 <= dst < n:      # mid-run: the config's pattern is wrong
            raise ConfigError("traffic.pattern", f"{name}: destination({src}, {index}) gave "
                              f"{described(dst)}, not a node id in [0, {n})")
        return int(dst)

    pattern.rule = lambda: rule                 # made once, the checked one
    pattern.destination = checked
    return pattern


def _is_torus(topology: Any) -> bool:
    """Whether the pattern may read node coordinates (the ``coordinates`` capability)."""
    return "coordinates" in topology.capabilities


def _shape(topology: Any) -> str:
    """How error messages name a topology: ``8x8x16``, ``the graph`` or ``a job of N ranks``."""
    if _is_torus(topology):
        return "x".join(str(k) for k in topology.dims)
    return topology.label


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _coordinate_arrays(topology: Any) -> list[np.ndarray]:
    """Per dimension, the coordinate of every node id (first dimension fastest)."""
    ids = np.arange(topology.num_nodes, dtype=np.int64)
    return [(ids // s) % k for k, s in zip(topology.dims, topology.strides)]


def _node_ids(topology: Any, coords: list[np.ndarray]) -> np.ndarray:
    return sum(c * s for c, s in zip(coords, topology.strides))


class Pattern:
    """Base of every destination pattern.

    Subclasses set :attr:`defaults` (their parameters and default values), optionally
    :attr:`needs_torus`, and implement :meth:`_build` (validate parameters and preconditions,
    precompute) and :meth:`destination`.

    Attributes
    ----------
    name : str
        Registry name, set by :func:`register`.
    permutation : bool
        True when every source has one fixed destination (then :meth:`mapping` gives it).
    topology, num_nodes, seed
        What the pattern was built on; ``num_nodes`` counts the topology's terminals (its
        routers on a torus or graph, one terminal each).
    params : Mapping[str, Any]
        Resolved parameters (defaults filled in, normalised), read-only; fit for result metadata.
    """

    name: ClassVar[str] = "?"
    permutation: ClassVar[bool] = False
    needs_torus: ClassVar[bool] = False
    defaults: ClassVar[Mapping[str, Any]] = MappingProxyType({})

    def __init__(self, topology: Any, *, seed: int, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.defaults), key=str)
        if unknown:
            valid = ", ".join(sorted(self.defaults)) or "none"
            near = did_you_mean(unknown[0], self.defaults)
            raise self._error(f"unknown parameter(s) {', '.join(map(str, unknown))}; "
                              f"{near + ' ' if near else ''}valid: {valid}", unknown[0])
        if not _is_int(seed) or seed < 0:
            raise self._error(f"seed must be a non-negative integer, got {seed!r}")
        if self.needs_torus and not _is_torus(topology):
            what = topology.describe()
            raise self._error(f"needs a torus (it works on node coordinates), got {what}")
        self.topology = topology
        self.num_nodes = int(topology.num_terminals)     # sources and destinations: terminals
        self.seed = int(seed)
        if self.num_nodes < 2:
            raise self._error(f"{_shape(topology)} has {self.num_nodes} node(s); "
                              f"a traffic pattern needs at least 2")
        resolved = self._build(**{**self.defaults, **params})
        self.params: Mapping[str, Any] = MappingProxyType(resolved)

    def _build(self, **params: Any) -> dict[str, Any]:
        """Check parameters and preconditions, precompute; return the normalised parameters."""
        return params

    def _error(self, reason: str, param: str | None = None) -> PatternError:
        return PatternError(f"{self.name}: {reason}", param)

    def _require_power_of_two(self) -> int:
        n = self.num_nodes
        if n & (n - 1):
            raise self._error(f"{_shape(self.topology)} has {n} nodes, not a power of two")
        return n.bit_length() - 1

    def destination(self, src: int, index: int, rng: np.random.Generator) -> int:
        """Destination of the ``index``-th message (0-based) created by ``src``.

        ``rng`` is the source's own stream; patterns without per-message randomness ignore it.
        """
        raise NotImplementedError

    def mapping(self) -> np.ndarray | None:
        """For a permutation pattern, the destination of every source (a fresh array);
        otherwise None."""
        return None

    def rule(self) -> Rule | None:
        """The destinations as data (:class:`~icsim.traffic.rules.Rule`), which the compiled
        engine evaluates as messages fall due; None when only :meth:`destination` knows them
        (such a pattern runs on the SimPy engine).  A permutation's rule is its table."""
        mapping = self.mapping()
        return None if mapping is None else Rule.of_table(mapping)

    def rates(self) -> np.ndarray:
        """The long-run share of each source's messages sent to each destination: an N x N
        matrix whose rows sum to 1 (the traffic matrix of exact load analysis,
        :mod:`icsim.routing.oblivious`).  A permutation's is its permutation matrix."""
        mapping = self.mapping()
        if mapping is None:
            raise NotImplementedError(f"{self.name}: no traffic matrix")
        out = np.zeros((self.num_nodes, self.num_nodes))
        out[np.arange(self.num_nodes), mapping] = 1.0
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"<{type(self).__name__} {self.name!r} on {_shape(self.topology)}" \
               f"{' ' + args if args else ''}>"


class _FixedMapping(Pattern):
    """A pattern in which every source has one destination, kept as a tuple of ints."""

    permutation = True

    def _build(self, **params: Any) -> dict[str, Any]:
        resolved = self._check(**params)
        self._table: tuple[int, ...] = tuple(self._compute().tolist())
        return resolved

    def _check(self, **params: Any) -> dict[str, Any]:
        """Validate parameters and preconditions; return the normalised parameters."""
        return params

    def _compute(self) -> np.ndarray:
        """Destination of every node id, vectorised."""
        raise NotImplementedError

    def destination(self, src: int, index: int, rng: np.random.Generator) -> int:
        return self._table[src]

    def mapping(self) -> np.ndarray:
        return np.array(self._table, dtype=np.int64)


# ---------------------------------------------------------------------------- random patterns

@register("uniform")
class Uniform(Pattern):
    """Uniformly random destination, drawn per message.

    Parameters
    ----------
    include_self : bool, default False
        Draw from all N nodes (the reference simulator's behaviour) instead of the N - 1 others.
    """

    defaults = MappingProxyType({"include_self": False})

    def _build(self, *, include_self: Any) -> dict[str, Any]:
        if not isinstance(include_self, (bool, np.bool_)):
            raise self._error(f"include_self must be true or false, got {include_self!r}",
                              "include_self")
        self._exclude_self = not include_self
        self._span = self.num_nodes - self._exclude_self
        return {"include_self": bool(include_self)}

    def rates(self) -> np.ndarray:
        n = self.num_nodes
        out = np.full((n, n), 1.0 / self._span)
        if self._exclude_self:
            np.fill_diagonal(out, 0.0)
        return out

    def rule(self) -> Rule:
        return Rule.of_block(0, self._span, self.num_nodes, skip_self=self._exclude_self)

    def destination(self, src: int, index: int, rng: np.random.Generator) -> int:
        # random() < 1 - 2**-53, so the product stays below span for any span < 2**53
        d = int(rng.random() * self._span)
        if self._exclude_self and d >= src:
            d += 1
        return d


@register("hotspot")
class Hotspot(Pattern):
    """With probability ``fraction`` a hotspot node, otherwise uniform over the other nodes.

    The hotspot is chosen uniformly among ``nodes``; a hotspot source may draw itself (a local
    message), as the definition has no exception for it.  The uniform part may also land on a
    hotspot, so a hotspot receives a share ``fraction / H + (1 - fraction) / (N - 1)`` of the
    messages of a non-hotspot source (H hotspots).

    Parameters
    ----------
    fraction : float in [0, 1], default 0.1
    nodes : sequence of int, default [0]
        Distinct node ids.
    """

    defaults = MappingProxyType({"fraction": 0.1, "nodes": (0,)})

    def _build(self, *, fraction: Any, nodes: Any) -> dict[str, Any]:
        if (not isinstance(fraction, numbers.Real) or isinstance(fraction, (bool, np.bool_))
                or not 0.0 <= fraction <= 1.0):
            raise self._error(f"fraction must be a number in [0, 1], got {fraction!r}",
                              "fraction")
        if isinstance(nodes, (str, bytes)) or not hasattr(nodes, "__iter__"):
            raise self._error(f"nodes must be a list of node ids, got {nodes!r}", "nodes")
        nodes = list(nodes)
        if not nodes:
            raise self._error("nodes is empty; give at least one hotspot node", "nodes")
        for v in nodes:
            if not _is_int(v) or not 0 <= v < self.num_nodes:
                raise self._error(f"hotspot node {v!r} is not a node id in "
                                  f"[0, {self.num_nodes})", "nodes")
        hot = tuple(int(v) for v in nodes)
        if len(set(hot)) != len(hot):
            raise self._error(f"hotspot nodes {list(hot)} contain duplicates", "nodes")
        self._hot = hot
        self._fraction = float(fraction)
        return {"fraction": float(fraction), "nodes": hot}

    def rates(self) -> np.ndarray:
        n, f = self.num_nodes, self._fraction
        out = np.full((n, n), (1.0 - f) / (n - 1))
        np.fill_diagonal(out, 0.0)
        out[:, list(self._hot)] += f / len(self._hot)
        return out

    def rule(self) -> Rule:
        return Rule("hotspot", self.num_nodes, fraction=self._fraction,
                    hot=np.array(self._hot, dtype=np.int64))

    def destination(self, src: int, index: int, rng: np.random.Generator) -> int:
        # One draw decides both the branch and the node: below f, r/f is uniform on [0, 1);
        # above, (r - f)/(1 - f) is.  Rounding can push either to 1.0, hence the clamps.
        f = self._fraction
        r = rng.random()
        if r < f:
            h = len(self._hot)
            i = int(r / f * h)
            return self._hot[i if i < h else h - 1]
        others = self.num_nodes - 1
        d = int((r - f) / (1.0 - f) * others)
        if d >= others:
            d = others - 1
        return d + (d >= src)


@register("permutation")
class Permutation(_FixedMapping):
    """A random permutation of the nodes, drawn once from ``seed`` and fixed for the run, or
    one read from a file.

    Drawn with ``numpy.random.default_rng(seed).permutation``; with ``derangement`` the draw is
    repeated until no node maps to itself (about e tries), which makes it uniform over all
    derangements.  (The reference simulator's glibc ``rand_r`` single-cycle permutation is not
    reproduced.)

    A ``file`` (what ``icsim analyze --worst-case --out`` writes) holds one destination per
    line, in source order (line 1: node 0's), ``#`` comments and blank lines ignored: every
    node exactly once; a node mapped to itself is a fixed point (delivered locally).

    Parameters
    ----------
    derangement : bool, default True
        Forbid fixed points (of the drawn permutation).
    file : str, optional
        Read the permutation from this file instead of drawing it.
    """

    defaults = MappingProxyType({"derangement": True, "file": None})

    def _check(self, *, derangement: Any, file: Any) -> dict[str, Any]:
        if not isinstance(derangement, (bool, np.bool_)):
            raise self._error(f"derangement must be true or false, got {derangement!r}",
                              "derangement")
        self._derangement = bool(derangement)
        if file is not None and not isinstance(file, str):
            raise self._error(f"file must be a path, got {file!r}", "file")
        self._file = file
        return {"derangement": bool(derangement), **({"file": file} if file else {})}

    def _read(self) -> np.ndarray:
        n, out = self.num_nodes, []
        try:
            for lineno, text in read_lines(self._file):
                text = text.split("#", 1)[0].strip()
                if not text:
                    continue
                # ASCII digits only ("²" is a digit to isdigit(), not to int()), and no
                # longer than n's (int() refuses 4,300 digits and more)
                if (not (text.isascii() and text.isdigit()) or len(text) > len(str(n))
                        or int(text) >= n):
                    shown = text if len(text) <= 24 else text[:21] + "..."
                    raise InputFileError(self._file, f"{shown!r} is not a node id in "
                                         f"[0, {n})", lineno)
                if len(out) == n:
                    raise InputFileError(self._file, f"more than {n} destinations", lineno)
                out.append(int(text))
        except InputFileError as exc:
            raise self._error(str(exc), "file") from None
        if len(out) != n:
            raise self._error(f"{self._file}: {len(out)} destinations for {n} nodes", "file")
        mapping = np.array(out, dtype=np.int64)
        seen = np.bincount(mapping, minlength=n)
        if (seen != 1).any():
            twice = int(np.flatnonzero(seen > 1)[0])
            raise self._error(f"{self._file}: node {twice} is the destination of "
                              f"{int(seen[twice])} sources (a permutation has each once)",
                              "file")
        return mapping

    def _compute(self) -> np.ndarray:
        if self._file is not None:
            return self._read()
        rng = np.random.default_rng(self.seed)
        ids = np.arange(self.num_nodes)
        while True:
            perm = rng.permutation(self.num_nodes)
            if not self._derangement or not (perm == ids).any():
                return perm


# ---------------------------------------------------------------------------- index patterns

@register("transpose")
class Transpose(_FixedMapping):
    """The node index as a q x q matrix (q = sqrt N), transposed: ``r + q*c -> c + q*r``.

    On the index, not on coordinates: an 8x8x16 torus (q = 32) maps ``i + 32j`` to
    ``j + 32i``.  The q diagonal nodes are fixed points.
    """

    def _check(self) -> dict[str, Any]:
        n = self.num_nodes
        q = math.isqrt(n)
        if q * q != n:
            raise self._error(f"{_shape(self.topology)} has {n} nodes, not a perfect square")
        self._q = q
        return {}

    def _compute(self) -> np.ndarray:
        a = np.arange(self.num_nodes, dtype=np.int64)
        return a // self._q + self._q * (a % self._q)


class _AddressBits(_FixedMapping):
    """A fixed mapping of the ``b`` address bits of a node id (``self._b``; N a power of
    two)."""

    def _check(self) -> dict[str, Any]:
        self._b = self._require_power_of_two()
        return {}


@register("bitreverse")
class BitReverse(_AddressBits):
    """The b address bits reversed (N a power of two); the 2**ceil(b/2) palindromes are fixed."""

    def _compute(self) -> np.ndarray:
        a = np.arange(self.num_nodes, dtype=np.int64)
        out = np.zeros_like(a)
        for j in range(self._b):
            out |= ((a >> j) & 1) << (self._b - 1 - j)
        return out


@register("bitcomplement")
class BitComplement(_AddressBits):
    """``(N - 1) XOR a`` (N a power of two); on a torus every coordinate ``c -> k - 1 - c``.
    No fixed points."""

    def _compute(self) -> np.ndarray:
        return (self.num_nodes - 1) ^ np.arange(self.num_nodes, dtype=np.int64)


@register("shuffle")
class Shuffle(_AddressBits):
    """The perfect shuffle: the b address bits rotated left by one, ``d_i = a_(i-1 mod b)``
    (N a power of two; Dally and Towles, Table 3.1).  Nodes 0 and N - 1 are fixed."""

    def _compute(self) -> np.ndarray:
        a = np.arange(self.num_nodes, dtype=np.int64)
        return ((a << 1) & (self.num_nodes - 1)) | (a >> (self._b - 1))


@register("bitrotation")
class BitRotation(_AddressBits):
    """The b address bits rotated right by one, ``d_i = a_(i+1 mod b)``: the shuffle's inverse
    (N a power of two; Dally and Towles, Table 3.1).  Nodes 0 and N - 1 are fixed."""

    def _compute(self) -> np.ndarray:
        a = np.arange(self.num_nodes, dtype=np.int64)
        return (a >> 1) | ((a & 1) << (self._b - 1))


@register("butterfly", "fft")
class Butterfly(Pattern):
    """``a XOR 2**j`` with ``j = index mod b``: each message of a source flips the next bit.

    N must be a power of two.  On 512 nodes messages 0..8 flip bits 0..8, message 9 bit 0 again.
    """

    def _build(self) -> dict[str, Any]:
        b = self._require_power_of_two()
        self._b = b
        self._bits = tuple(1 << j for j in range(b))
        return {}

    def destination(self, src: int, index: int, rng: np.random.Generator) -> int:
        return src ^ self._bits[index % self._b]

    def rule(self) -> Rule:
        every = np.arange(self.num_nodes, dtype=np.int64)[:, None]
        return Rule.of_table(every ^ np.array(self._bits, dtype=np.int64)[None, :])

    def rates(self) -> np.ndarray:
        n, every = self.num_nodes, np.arange(self.num_nodes)
        out = np.zeros((n, n))
        for bit in self._bits:
            out[every, every ^ bit] += 1.0 / self._b
        return out


@register("alltoall")
class AllToAll(Pattern):
    """Message ``i`` of ``src`` goes to ``(src + 1 + (i mod (N - 1))) mod N``.

    Every other node exactly once in each run of N - 1 consecutive messages, never ``src``.
    """

    def _build(self) -> dict[str, Any]:
        self._others = self.num_nodes - 1
        return {}

    def destination(self, src: int, index: int, rng: np.random.Generator) -> int:
        return (src + 1 + index % self._others) % self.num_nodes

    def rule(self) -> Rule:
        return Rule("rotate", self.num_nodes, size=self._others, offset=1)

    def rates(self) -> np.ndarray:
        out = np.full((self.num_nodes, self.num_nodes), 1.0 / self._others)
        np.fill_diagonal(out, 0.0)
        return out


# ---------------------------------------------------------------------------- coordinate patterns

@register("transpose3d")
class Transpose3D(_FixedMapping):
    """Coordinates rotated by one: ``(x, y, z) -> (y, z, x)``, i.e. dest.x = src.y,
    dest.y = src.z, dest.z = src.x.

    In n dimensions ``dest[d] = src[(d + 1) mod n]``; on two dimensions that is ``(x, y) ->
    (y, x)``.  Needs a torus of n >= 2 dimensions, all of one size k; the k nodes with all
    coordinates equal are fixed points.
    """

    needs_torus = True

    def _check(self) -> dict[str, Any]:
        dims = self.topology.dims
        if len(dims) < 2:
            raise self._error(f"{_shape(self.topology)} has one dimension; rotating "
                              f"coordinates needs at least 2")
        if len(set(dims)) != 1:
            raise self._error(f"{_shape(self.topology)} has unequal sizes; every dimension "
                              f"must have the same size")
        return {}

    def _compute(self) -> np.ndarray:
        c = _coordinate_arrays(self.topology)
        return _node_ids(self.topology, c[1:] + c[:1])


@register("tornado")
class Tornado(_FixedMapping):
    """Almost half-way round: every coordinate ``c -> (c + ceil(k/2) - 1) mod k``.

    Dimensions of size 1 or 2 have a shift of 0 and keep their coordinate, so at least one
    dimension must have size >= 3; then no node is a fixed point.

    With ``over: index`` the shift applies to the node index as one ring of N nodes,
    ``s -> (s + ceil(N/2) - 1) mod N`` — the tornado of MPI benchmarks over ranks (as the
    Angara paper's Desmos measurements use); it needs no torus.
    """

    defaults = MappingProxyType({"over": "coordinates"})

    def _check(self, *, over: Any) -> dict[str, Any]:
        if over not in ("coordinates", "index"):
            raise self._error(f"over must be 'coordinates' or 'index', got {over!r}", "over")
        if over == "coordinates":
            if not _is_torus(self.topology):
                raise self._error("needs a torus (it works on node coordinates); use "
                                  "over: index on other topologies")
            if max(self.topology.dims) < 3:
                raise self._error(f"{_shape(self.topology)} has no dimension of size >= 3; "
                                  f"every node would send to itself")
        elif self.num_nodes < 3:
            raise self._error(f"{self.num_nodes} nodes: every node would send to itself")
        return {"over": over}

    def _compute(self) -> np.ndarray:
        if self.params_over == "index":
            n = self.num_nodes
            return (np.arange(n) + (n + 1) // 2 - 1) % n
        coords = [(c + (k + 1) // 2 - 1) % k
                  for c, k in zip(_coordinate_arrays(self.topology), self.topology.dims)]
        return _node_ids(self.topology, coords)

    def _build(self, **params: Any) -> dict[str, Any]:
        self.params_over = params.get("over", "coordinates")
        return super()._build(**params)


@register("neighbor")
class Neighbor(Pattern):
    """Message ``i`` goes through the ``(i mod P)``-th present port (P present ports, in port
    order ``x+, x-, y+, y-, ...``).

    On a full torus of rings that visits the 2n neighbours in turn; at a mesh edge or along a
    size-2 dimension the absent ports are skipped, so the cycle is shorter.
    """

    needs_torus = True

    def _build(self) -> dict[str, Any]:
        self._nbrs = tuple(tuple(v for v in row if v >= 0)
                           for row in self.topology.neighbor_table)
        return {}

    def destination(self, src: int, index: int, rng: np.random.Generator) -> int:
        nbrs = self._nbrs[src]
        return nbrs[index % len(nbrs)]

    def rule(self) -> Rule:
        width = max(map(len, self._nbrs))
        table = np.zeros((self.num_nodes, width), dtype=np.int64)
        for src, nbrs in enumerate(self._nbrs):
            table[src, :len(nbrs)] = nbrs
        return Rule.of_table(table, [len(nbrs) for nbrs in self._nbrs])

    def rates(self) -> np.ndarray:
        out = np.zeros((self.num_nodes, self.num_nodes))
        for src, nbrs in enumerate(self._nbrs):
            for v in nbrs:
                out[src, v] += 1.0 / len(nbrs)
        return out
