"""A routing program read in Python: what the SimPy engine runs (:mod:`icsim.routing.program`
says what the program's tables and rules mean; the compiled engine reads the same program in
numba, ``simulator/engines/compiled/routing.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Sequence

from icsim.routing.program import (OFFSET, ROUTE, Decision, Option, Phase, Profit, Program,
                                   QueueQuadrant, RandomInBox, RandomTarget, TableTarget, Ugal,
                                   Uniform, kind_code)

#: a mask's 64 bits as a Python int (port 63 is an int64 mask's sign bit)
_BITS = (1 << 64) - 1


class Interpreter:
    """A program read in Python: ``candidates``, ``inject`` and ``admitted`` as the SimPy
    engine calls them (:class:`~icsim.routing.registry.Routing`), the rules of the module
    docstring.  The compiled engine reads the same program (``engines/compiled``).

    Candidate groups are interned per (phase, mask, escape port): a packet-hop looks up a
    table, ANDs a filter and picks an interned tuple.
    """

    def __init__(self, program: Program, topology: Any, deroute_kinds: Sequence[str]):
        self.program = program
        self._topology = topology
        self.num_nodes = topology.num_nodes
        self.eject = topology.num_ports
        self.eject_groups = (((self.eject, 0),),)
        self._codes_of = {k: kind_code(k, deroute_kinds) for k in (None, *deroute_kinds)}
        caps = topology.capabilities
        self._codes = topology.relative_codes if "offsets" in caps else None
        self._base = topology.relative_base if "offsets" in caps else 0
        self._next = [i if ph.next is None else ph.next for i, ph in enumerate(program.phases)]
        self._find = [self._finder(i, ph) for i, ph in enumerate(program.phases)]
        self.has_inject = program.decision is not None
        self._reroute = [ph.reroute for ph in program.phases]
        self._detour_kind = [self._codes_of[ph.detour_kind] if ph.detour is not None else None
                             for ph in program.phases]
        self.has_admit = (program.has_routes or any(r is not None for r in self._reroute)
                          or any(k is not None for k in self._detour_kind))
        self._decide = self._decision(program.decision) if self.has_inject else None
        d = program.decision
        self._once = (not isinstance(d, (Profit, QueueQuadrant, Ugal))
                      or isinstance(d, Ugal) and d.once)
        self.queues: Sequence[int] = ()
        self.num_vcs = self.ports_per_router = 1
        self.adaptive_vc = 0
        self.rand: Callable[[], float] = lambda: 0.0

    # ------------------------------------------------------------------ hops
    def _finder(self, index: int, ph: Phase) -> Callable:
        """``find(node, packet, t) -> groups`` for a phase whose packet heads for t."""
        if ph.key == ROUTE:
            hop, interned, eject = ph.routes.hop, {}, self.eject_groups

            def route(node, packet, t):
                h = hop(packet.src, packet.dst, packet.ri)
                if h is None:
                    return eject
                g = interned.get(h)
                if g is None:
                    g = interned[h] = ((h,),)
                return g
            return route
        ports = ph.ports.tolist() if len(ph.ports) <= 1 << 22 else ph.ports
        escape = (None if ph.escape is None else
                  ph.escape.tolist() if len(ph.escape) <= 1 << 22 else ph.escape)
        adaptive, esc_vc, filtered = ph.adaptive_vc, ph.escape_vc, ph.filtered
        esc_vcs = (None if ph.escape_vcs is None else
                   ph.escape_vcs.tolist() if len(ph.escape_vcs) <= 1 << 22 else ph.escape_vcs)
        by_terminal = None if ph.terminal_escape is None else ph.terminal_escape.tolist()
        conc, eject = self._topology.terminals_per_router, self.eject
        detour = None if ph.detour is None else ph.detour.tolist()
        detour_from = None if ph.detour_from is None else ph.detour_from.tolist()
        groups: dict[tuple[int, int, int, int], tuple] = {}

        def ports_of(mask: int) -> tuple:
            group = []
            while mask:
                low = mask & -mask
                group.append((low.bit_length() - 1, adaptive))
                mask ^= low
            return tuple(group)

        def make(mask: int, esc: int, esc_vc: int | None, off: int) -> tuple:
            out = []
            if adaptive is not None:
                out.append(ports_of(mask))
                if off:
                    out.append(ports_of(off))
            if esc_vc is not None and esc >= 0:
                out.append(((esc, esc_vc),))
            return tuple(group for group in out if group)   # none at all: the engine's error

        codes, base, n = self._codes, self._base, self.num_nodes
        offset = ph.key == OFFSET
        dateline = ph.dateline_vc
        coords = self._topology.coord_array.tolist() if dateline is not None else None

        def table(node, packet, t):
            k = codes[t] - codes[node] + base if offset else node * n + t
            mask = int(ports[k]) & _BITS
            if filtered:
                mask &= packet.sel
            esc = int(escape[k]) if escape is not None else (mask & -mask).bit_length() - 1
            if esc < 0 and by_terminal is not None:   # by the destination terminal
                esc = by_terminal[node * conc + max(packet.eport - eject, 0)]
            vc = esc_vc if esc_vcs is None else int(esc_vcs[k])
            if dateline is not None and esc >= 0:
                x, y = coords[node][esc >> 1], coords[t][esc >> 1]
                if (y < x) if esc & 1 == 0 else (y > x):
                    vc = dateline
            off = 0
            if detour is not None:            # rule 6: the detour group
                off = detour[k] & ~mask & _BITS
                if detour_from is not None:
                    off &= detour_from[node * n + packet.src]
            g = groups.get((mask, esc, vc, off))
            if g is None:
                g = groups[(mask, esc, vc, off)] = make(mask, esc, vc, off)
            return g
        return table

    def candidates(self, node: int, packet) -> tuple:
        target = packet.target
        phase = packet.phase
        if target == node:                    # the intermediate target reached: next phase
            phase = self._next[phase]
            again = self._reroute[phase]
            if again is None:
                packet.phase = phase
                packet.target = target = -1
            else:                             # UGAL's choice again, taken when admitted here
                via, minimal = self._choose(node, packet.dst)
                if minimal:
                    packet.pending = (phase, -1, packet.sel, packet.deroute)
                    target = -1
                else:
                    opt = again.valiant
                    phase, target = opt.phase, via
                    packet.pending = (phase, via, opt.sel, self._codes_of[opt.kind])
        t = packet.dst if target < 0 else target
        find = self._find[phase]
        if t == node and self.program.phases[phase].key != ROUTE:
            return self.eject_groups
        return find(node, packet, t)

    def admitted(self, node: int, packet, port: int, vc: int) -> None:
        if self._detour_kind[packet.phase] is not None and not packet.deroute:
            self._detoured(node, packet, port, vc)
        pending = packet.pending
        if pending is not None and packet.target == node:
            packet.phase, packet.target, packet.sel, packet.deroute = pending
            packet.pending = None
        if port != self.eject and self.program.phases[packet.phase].key == ROUTE:
            packet.ri += 1

    def _detoured(self, node: int, packet, port: int, vc: int) -> None:
        """Rule 6: a packet admitted to a detour queue (the adaptive VC, a port outside the
        phase's mask) counts under the phase's detour kind."""
        phase, t = packet.phase, packet.target
        if t == node:
            phase, t = self._next[phase], -1
        t = packet.dst if t < 0 else t
        ph = self.program.phases[phase]
        if t == node or port >= self.eject or vc != ph.adaptive_vc:
            return
        mask = int(ph.ports[node * self.num_nodes + t])
        if ph.filtered:
            mask &= packet.sel
        if not (mask >> port) & 1:
            packet.deroute = self._codes_of[ph.detour_kind]

    # ------------------------------------------------------------------ injection
    def _apply(self, packet, option: Option, target: int) -> None:
        packet.phase = option.phase
        packet.sel = option.sel
        packet.target = target
        packet.deroute = self._codes_of[option.kind]

    def _decision(self, decision: Decision) -> Callable:
        apply, n = self._apply, self.num_nodes
        if isinstance(decision, Uniform):
            choices = decision.choices

            def uniform(node, packet, used, rand):
                j = int(rand() * len(choices)) if len(choices) > 1 else 0
                apply(packet, choices[j], -1)
            return uniform
        if isinstance(decision, RandomTarget):
            choices = decision.options()

            def random_target(node, packet, used, rand):
                target = int(rand() * n)
                j = int(rand() * len(choices)) if len(choices) > 1 else 0
                apply(packet, choices[j], target)
            return random_target
        if isinstance(decision, TableTarget):
            option, targets = decision.option, decision.targets
            m = targets.shape[1]

            def table_target(node, packet, used, rand):
                apply(packet, option, int(targets[node, int(rand() * m) if m > 1 else 0]))
            return table_target
        if isinstance(decision, Ugal):
            return self._ugal(decision)
        if isinstance(decision, RandomInBox):
            option, topo = decision.option, self._topology
            box = decision.table(topo.dims)
            coords, dims, strides = topo.coord_array, list(topo.dims), list(topo.strides)
            code, step, sel = box.code, box.step.tolist(), box.sel.tolist()

            def random_in_box(node, packet, used, rand):
                cs, ct = coords[node], coords[packet.dst]
                target, mask = 0, -1
                for i, k in enumerate(dims):
                    row = box.draw(i, int(code[i, cs[i], ct[i]]), rand)
                    target += (int(cs[i]) + step[row]) % k * strides[i]
                    mask &= sel[row]
                apply(packet, option, target)
                packet.sel = option.sel & mask
            return random_in_box
        if isinstance(decision, QueueQuadrant):
            option, topo = decision.option, self._topology
            coords, dims = topo.coord_array, list(topo.dims)

            def queue_quadrant(node, packet, used, rand):
                cs, ct = coords[node], coords[packet.dst]
                mask = -1
                for i, k in enumerate(dims):
                    c = (int(ct[i]) - int(cs[i])) % k
                    if c == 0:
                        continue
                    low, d = (2 * i, c) if 2 * c <= k else (2 * i + 1, k - c)
                    keep = used[low] * d <= used[low ^ 1] * (k - d)
                    mask &= ~(1 << (low ^ 1 if keep else low))
                apply(packet, option, -1)
                packet.sel = option.sel & mask
            return queue_quadrant
        if isinstance(decision, Profit):
            choose = decision.choose

            def profit(node, packet, used, rand):
                option, target = choose(node, packet.dst, used, rand)
                apply(packet, option, target)
            return profit
        raise ValueError(f"no interpreter for the decision {type(decision).__name__}")

    def _ugal(self, d: Ugal) -> Callable:
        apply, n = self._apply, self.num_nodes
        via_table = d.minimal_via

        def ugal(node, packet, used, rand):
            via, minimal = self._choose(node, packet.dst)
            if minimal:
                first = -1 if via_table is None else int(via_table[node * n + packet.dst])
                apply(packet, d.minimal if first < 0 else
                      replace(d.minimal, phase=d.minimal_via_phase), first)
            else:
                apply(packet, d.valiant, via)
        return ugal

    def _choose(self, node: int, dst: int) -> tuple[int, bool]:
        """The program's UGAL rule at ``node`` for ``dst``: ``(Valiant's target drawn,
        whether the minimal route wins)``; one draw of the run's stream where there is more
        than one target."""
        d, n = self.program.decision, self.num_nodes
        m = d.targets.shape[1]
        via = int(d.targets[node, int(self.rand() * m) if m > 1 else 0])
        k_min, k_via = node * n + dst, node * n + via
        h_min = int(d.hops[k_min])
        h_val = int(d.hops[k_via]) + int(d.hops[via * n + dst])
        occ, V = self.queues, self.num_vcs
        if d.probe is None:                       # UGAL-L: this router's own queues
            base = node * self.ports_per_router
            a = self.adaptive_vc
            q_min = occ[(base + int(d.first[0][k_min])) * V + a]
            q_val = occ[(base + int(d.first[1][k_via])) * V + a]
        else:                                     # UGAL-G: a channel of each route
            q_min = occ[int(d.probe[0][k_min]) * V + d.probe_vc]
            q_val = occ[int(d.probe[1][k_via]) * V + d.probe_vc]
        return via, q_min * h_min <= q_val * h_val + d.threshold

    def bind_queues(self, occupancy: Sequence[int], num_vcs: int, ports_per_router: int,
                    adaptive_vc: int, rand: Callable[[], float]) -> None:
        """The engine's queue occupancies by queue id, its ids' shape and the run's stream:
        what :class:`Ugal` reads (a router's queues, or any channel's) and draws from, at
        injection and where a :class:`Reroute` makes the choice again."""
        self.queues, self.num_vcs = occupancy, num_vcs
        self.ports_per_router, self.adaptive_vc, self.rand = ports_per_router, adaptive_vc, rand

    def inject(self, node: int, packet, used, rand) -> None:
        if self._once:                        # a draw: once per packet
            if packet.drawn:
                return
            packet.drawn = True
        self._decide(node, packet, used, rand)

    def describe(self, packet) -> str:
        if packet.target >= 0:
            return f"phase {packet.phase}, via {packet.target}"
        return f"phase {packet.phase}" if len(self.program.phases) > 1 else ""
