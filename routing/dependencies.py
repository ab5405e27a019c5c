"""The channel-dependency graph of a routing program (SPEC §11): every channel a packet may
hold, to every channel it may ask for next, over every state (router, target) of every phase
-- a superset of the real graph, so acyclic here means acyclic there.  The build checks it for
the algorithms whose deadlock freedom rests on it (:attr:`icsim.routing.registry.Routing.
acyclic`), with :func:`icsim.routing.deadlock.cycle_in_edges`.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from icsim.routing.program import PAIR, Phase, Program


def out_masks(ph: Phase, n: int, num_vcs: int, escape_only: bool,
              topology: Any = None) -> dict[int, np.ndarray]:
    """Per VC the phase may take (the others left out), per state ``router * n + t``, the
    bitmask of the ports a packet heading for ``t`` may leave ``router`` by on that VC in
    phase ``ph`` (0 at ``t`` itself; a dateline phase's hop on its dateline VC while the
    wraparound is ahead, rule 5; a detour group's ports on the adaptive VC, from any source,
    rule 6)."""
    out: dict[int, np.ndarray] = {}
    ports = np.asarray(ph.ports, dtype=np.int64)
    if ph.escape_vc is not None:
        if ph.escape is not None:
            e = np.asarray(ph.escape, np.int64)
            esc = np.maximum(e, 0)
            np.left_shift(1, esc, out=esc)
            by_terminal = e < 0                 # any port of the mask may be the one
            if by_terminal.any():
                esc[by_terminal] = ports[by_terminal]
            esc[ports == 0] = 0
        else:
            esc = ports & -ports
        vcs = None if ph.escape_vcs is None else np.asarray(ph.escape_vcs, np.int64)
        if ph.dateline_vc is not None:         # ports 2d (+) and 2d + 1 (-) of a torus
            port = np.log2(np.maximum(esc, 1)).astype(np.int64)
            coords = np.asarray(topology.coord_array)
            r, t = np.divmod(np.arange(n * n), n)
            x, y = coords[r, port >> 1], coords[t, port >> 1]
            ahead = np.where(port & 1 == 0, y < x, y > x) & (esc != 0)
            vcs = np.where(ahead, ph.dateline_vc, ph.escape_vc if vcs is None else vcs)
        if vcs is None:
            out[ph.escape_vc] = esc
        else:
            for w in range(num_vcs):
                on = vcs == w
                if on.any():
                    out[w] = np.where(on, esc, 0)
    if ph.adaptive_vc is not None and not escape_only:
        w = ph.adaptive_vc
        out[w] = out[w] | ports if w in out else ports.copy()
        if ph.detour is not None:             # any source's detours (a superset)
            out[w] |= np.asarray(ph.detour, dtype=np.int64)
    for masks in out.values():
        masks[np.arange(n) * (n + 1)] = 0
    return out


def _first_hops(out: dict[int, np.ndarray], n: int, num_vcs: int) -> np.ndarray:
    """``[w, r]``: every port a phase's masks ``out`` give on VC ``w`` at router ``r``,
    toward any target."""
    first = np.zeros((num_vcs, n), dtype=np.int64)
    for w, masks in out.items():
        first[w] = np.bitwise_or.reduce(masks.reshape(n, n), axis=1)
    return first


def dependency_edges(program: Program, topology: Any, num_vcs: int,
                     escape_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The channel-dependency graph of every path the program can give, as edge arrays
    over channel ids ``(router * num_ports + port) * num_vcs + vc``: a channel a packet
    heading for ``t`` holds, to every channel it may ask for next at the router the first
    leads to (in the same phase; at its target, the next phase's first channel to any
    destination).  Every state (router, t) counts, whether or not a source reaches it (a
    superset of the real graph: acyclic here means acyclic there).  ``escape_only``: the
    escape channels alone (Duato's condition for adaptive routing over an escape network).
    Pair-keyed phases only (tables by router and target, any topology).

    Each edge once, ascending by source channel, then by the next channel.  In array code,
    one phase's masks at a time: every held channel's next ports are the OR of the masks of
    the states it leads to, a range of them per run of one mask (:func:`_next_masks`)."""
    n, nports = topology.num_nodes, topology.num_ports
    if any(ph.key != PAIR for ph in program.phases):
        raise ValueError("the dependency check reads pair-keyed phases only")
    nbr = topology.neighbor_array

    def masks(ph: Phase) -> dict[int, np.ndarray]:
        return out_masks(ph, n, num_vcs, escape_only, topology)

    entered = {f: None for ph in program.phases if ph.next is not None
               for f in (ph.next, *([] if program.phases[ph.next].reroute is None else
                                    [program.phases[ph.next].reroute.valiant.phase]))}
    firsts = {f: _first_hops(masks(program.phases[f]), n, num_vcs) for f in sorted(entered)}
    # nxt[c, w2]: the ports a packet holding channel c may ask for next on VC w2
    nxt = np.zeros((n * nports * num_vcs, num_vcs), dtype=np.int64)
    for ph in program.phases:
        # at its target a packet goes on in the next phase to any destination (or, where
        # that phase reroutes, in the reroute's phase to any target)
        entering = None
        if ph.next is not None:
            entering = firsts[ph.next].copy()
            again = program.phases[ph.next].reroute
            if again is not None:
                entering |= firsts[again.valiant.phase]
        _next_masks(nxt, masks(ph), entering, nbr, n, num_vcs)
    held = np.flatnonzero(nxt.any(axis=1))
    bits = np.unpackbits(nxt[held].astype("<i8").view(np.uint8).reshape(len(held), num_vcs, 8),
                         axis=2, bitorder="little")                  # [held, VC, port]
    row, port2, w2 = np.nonzero(bits[:, :, :nports].transpose(0, 2, 1))
    # ascending by held channel, then by next one
    c = held[row]
    v = nbr.reshape(-1)[c // num_vcs]
    return c.astype(np.int64), ((v * nports + port2) * num_vcs + w2).astype(np.int64)


#: states read at once by :func:`_next_masks` (bounds its temporary arrays)
CHUNK_STATES = 1 << 20


def _next_masks(nxt: np.ndarray, out: dict[int, np.ndarray], entering: np.ndarray | None,
                nbr: np.ndarray, n: int, num_vcs: int) -> None:
    """OR into ``nxt[c, w2]`` (``c`` a channel as :func:`dependency_edges` numbers them) the
    ports on VC ``w2`` of every state channel ``c`` leads to, over one phase's masks ``out``
    (per VC, per state ``router * n + t``): for each port ``b`` of ``out[w][r * n + t]``,
    the channel ``(r, b, w)`` leads to state ``(nbr[r, b], t)``, or, where that is ``t``
    itself, into ``entering[w2, t]`` (the next phase's first hops, None: none).  A port that
    leads nowhere holds no dependency.

    The states of a router with one mask for consecutive targets ``t0 .. t1 - 1`` (a *run*:
    a fat tree leaf's up ports toward every other leaf, a dragonfly router's port toward a
    whole group) lead, port by port, to the same targets at the next router: one OR over a
    range of its states (at ``t`` itself the mask is 0), and ``entering`` where ``t``
    falls in the range."""
    nports = nbr.shape[1]
    flat, nbr_flat = nxt.reshape(-1), nbr.reshape(-1)
    rows = max(1, CHUNK_STATES // n)
    onto = [w2 for w2 in range(num_vcs) if w2 in out or entering is not None]
    for w, col in out.items():
        for lo in range(0, n * n, rows * n):             # whole rows: runs end with them
            r, t0, t1, masks = _runs(col[lo:lo + rows * n], n, lo // n)
            for run, b in _ports(masks):                 # one port of each run's mask
                # by port, runs in order within one: each held channel's runs together
                order = np.argsort(b.astype(np.int8), kind="stable")
                run, b = run[order], b[order]
                rb = r[run] * nports + b                 # the held channel's (router, port)
                v = nbr_flat[rb]
                ok = np.flatnonzero(v >= 0)
                run, rb, v = run[ok], rb[ok], v[ok]
                heads = np.flatnonzero(np.concatenate(([True], rb[1:] != rb[:-1])))
                chan = rb[heads] * (num_vcs * num_vcs) + w * num_vcs
                ta, tb = t0[run], t1[run]
                arrive = (ta <= v) & (v < tb) if entering is not None else None
                for w2 in onto:
                    got = (_range_or(out[w2], v * n + ta, v * n + tb) if w2 in out
                           else np.zeros(len(v), dtype=np.int64))
                    if arrive is not None:
                        got[arrive] |= entering[w2, v[arrive]]
                    flat[chan + w2] |= np.bitwise_or.reduceat(got, heads)


def _runs(col: np.ndarray, n: int, first_row: int) -> tuple[np.ndarray, ...]:
    """The runs of ``col`` (whole rows of ``n`` states from router ``first_row`` on): per
    run of one non-zero mask for consecutive targets, ``(router, t0, t1, mask)``."""
    change = np.ones(len(col), dtype=bool)
    change[1:] = col[1:] != col[:-1]
    change[::n] = True                                   # a run ends with its row
    start = np.flatnonzero(change)
    end = np.append(start[1:], len(col))
    keep = np.flatnonzero(col[start])
    start, end = start[keep], end[keep]
    r = start // n
    t0 = start - r * n
    return r + first_row, t0, t0 + (end - start), col[start]


def _ports(masks: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every port of every mask, one per mask at a time (lowest first): ``(indices of the
    masks, their port)``, the indices ascending."""
    index, x = np.arange(len(masks)), masks.copy()
    while index.size:
        low = x & -x
        yield index, _bit_index(low)
        x ^= low
        more = np.flatnonzero(x)
        index, x = index[more], x[more]


def _range_or(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``values[lo[i]:hi[i]]`` OR-reduced, per ``i`` (``lo < hi <= len(values)``, the last
    value 0: a router's own state): a gather where the range is one entry, else
    ``reduceat`` over the ranges in ascending order (the gaps between them cost at most one
    pass over the span the ranges cover)."""
    got = values[lo]
    hi = np.minimum(hi, len(values) - 1)                 # the last value is 0
    wide = np.flatnonzero(hi - lo > 1)
    if wide.size:
        order = wide[np.argsort(lo[wide], kind="stable")]
        first = lo[order[0]]
        bounds = np.empty(2 * len(order), dtype=np.int64)
        bounds[0::2], bounds[1::2] = lo[order] - first, hi[order] - first
        span = values[first:first + bounds.max() + 1]
        got[order] = np.bitwise_or.reduceat(span, bounds)[0::2]
    return got


def _bit_index(powers: np.ndarray) -> np.ndarray:
    """The index of the one bit set in each int64 (bit 63 included): the exponent of the
    power of two as a float64."""
    return (powers.view(np.uint64).astype(np.float64).view(np.int64) >> 52) - 1023
