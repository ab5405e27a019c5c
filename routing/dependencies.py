"""The channel-dependency graph of a routing program (SPEC §11): every channel a packet may
hold, to every channel it may ask for next, over every state (router, target) of every phase
-- a superset of the real graph, so acyclic here means acyclic there.  The build checks it for
the algorithms whose deadlock freedom rests on it (:attr:`icsim.routing.registry.Routing.
acyclic`), with :func:`icsim.routing.deadlock.cycle_in_edges`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icsim.routing.program import PAIR, Phase, Program


def out_masks(ph: Phase, n: int, num_vcs: int, escape_only: bool,
              topology: Any = None) -> np.ndarray:
    """Per state ``router * n + t`` and VC, the bitmask of the ports a packet heading
    for ``t`` may leave ``router`` by on that VC in phase ``ph`` (0 at ``t`` itself; a
    dateline phase's hop on its dateline VC while the wraparound is ahead, rule 5; a detour
    group's ports on the adaptive VC, from any source, rule 6)."""
    out = np.zeros((n * n, num_vcs), dtype=np.int64)
    ports = np.asarray(ph.ports, dtype=np.int64)
    if ph.escape_vc is not None:
        if ph.escape is not None:
            e = np.asarray(ph.escape, np.int64)
            # by terminal (-1): any port of the mask may be the one
            esc = np.where(ports == 0, 0, np.where(e >= 0, np.left_shift(1, np.maximum(e, 0)),
                                                   ports))
        else:
            esc = ports & -ports
        vcs = (np.full(n * n, ph.escape_vc, np.int64) if ph.escape_vcs is None
               else np.asarray(ph.escape_vcs, np.int64))
        if ph.dateline_vc is not None:         # ports 2d (+) and 2d + 1 (-) of a torus
            port = np.log2(np.maximum(esc, 1)).astype(np.int64)
            coords = np.asarray(topology.coord_array)
            r, t = np.divmod(np.arange(n * n), n)
            x, y = coords[r, port >> 1], coords[t, port >> 1]
            ahead = np.where(port & 1 == 0, y < x, y > x) & (esc != 0)
            vcs = np.where(ahead, ph.dateline_vc, vcs)
        np.bitwise_or.at(out, (np.arange(n * n), vcs), esc)
    if ph.adaptive_vc is not None and not escape_only:
        out[:, ph.adaptive_vc] |= ports
        if ph.detour is not None:             # any source's detours (a superset)
            out[:, ph.adaptive_vc] |= np.asarray(ph.detour, dtype=np.int64)
    out[np.arange(n) * (n + 1)] = 0
    return out

def dependency_edges(program: Program, topology: Any, num_vcs: int,
                     escape_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The channel-dependency graph of every path the program can give, as edge arrays
    over channel ids ``(router * num_ports + port) * num_vcs + vc``: a channel a packet
    heading for ``t`` holds, to every channel it may ask for next at the router the first
    leads to (in the same phase; at its target, the next phase's first channel to any
    destination).  Every state (router, t) counts, whether or not a source reaches it (a
    superset of the real graph: acyclic here means acyclic there).  ``escape_only``: the
    escape channels alone (Duato's condition for adaptive routing over an escape network).
    Pair-keyed phases only (tables by router and target, any topology)."""
    n, nports = topology.num_nodes, topology.num_ports
    if any(ph.key != PAIR for ph in program.phases):
        raise ValueError("the dependency check reads pair-keyed phases only")
    nbr = topology.neighbor_array
    outs = [out_masks(ph, n, num_vcs, escape_only, topology) for ph in program.phases]
    src, dst = [], []
    t_of = np.tile(np.arange(n), n)
    r_of = np.repeat(np.arange(n), n)
    for f, ph in enumerate(program.phases):
        out = outs[f]
        nxt = f if ph.next is None else ph.next
        # at its target a packet goes on in the next phase to any destination (or, where
        # that phase reroutes, in the reroute's phase to any target)
        entering = None
        if ph.next is not None:
            entering = np.bitwise_or.reduce(outs[nxt].reshape(n, n, num_vcs), axis=1)
            again = program.phases[nxt].reroute
            if again is not None:
                entering |= np.bitwise_or.reduce(
                    outs[again.valiant.phase].reshape(n, n, num_vcs), axis=1)
        for w in range(num_vcs):
            col = out[:, w]
            for b in range(nports):
                held = np.nonzero((col >> b) & 1)[0]
                if not held.size:
                    continue
                r, t = r_of[held], t_of[held]
                v = nbr[r, b]
                onward = v != t
                acc = np.zeros((n, num_vcs), dtype=np.int64)   # by holding router
                np.bitwise_or.at(acc, r[onward], out[v[onward] * n + t[onward]])
                if entering is not None and not onward.all():
                    np.bitwise_or.at(acc, r[~onward], entering[v[~onward]])
                rows = np.nonzero(acc.any(axis=1))[0]
                for w2 in range(num_vcs):
                    for b2 in range(nports):
                        hit = rows[((acc[rows, w2] >> b2) & 1) == 1]
                        if hit.size:
                            src.append((hit * nports + b) * num_vcs + w)
                            dst.append((nbr[hit, b] * nports + b2) * num_vcs + w2)
    if not src:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(src), np.concatenate(dst)
