"""The profits that rank candidates: the paper's eqs. (15)-(17) and the reference simulator's
(§5a.8, §5a.12), over the occupancy of the source's adaptive queues.
"""

from __future__ import annotations

import math


def _paper_choice(plan, used, eta, rng):
    """Index of the best candidate under eq. (15)-(16) (ties: ``rng`` if given, else the
    first), or None when none beats the minimal route."""
    winners = _best_paper(plan.paper_groups, used, *plan.min_terms, eta)
    if not winners:
        return None
    if len(winners) > 1 and rng is not None:
        return winners[int(rng.integers(len(winners)))]
    return winners[0]


def _paper_groups(terms, intern, index=None):
    """Candidates grouped by first-leg ports for the paper profit, best ``d/d~`` first.

    ``terms[j] = (ports, n, ratio)``; members are reported as ``index[j]`` (default ``j``).
    Within a group the profit differs only by
    ``eta * ratio``, so only the members with the group's largest ratio can win (they tie).
    Returns ``(ports, n, ratio, members)`` sorted by ratio, descending: since eq. (15)'s first
    term is at most 1, a group with ``1 + eta * ratio`` below the best profit so far ends the
    search.
    """
    groups: dict[tuple[int, ...], list] = {}
    for j, (ports, n, ratio) in enumerate(terms):
        g = groups.get(ports)
        if g is None or ratio > g[2]:
            groups[ports] = [ports, n, ratio, [j]]
        elif ratio == g[2]:
            g[3].append(j)
    ordered = sorted(groups.values(), key=lambda g: (-g[2], g[3][0]))
    index = index or range(len(terms))
    return intern(tuple(intern((p, n, r, intern(tuple(index[j] for j in m))))
                        for p, n, r, m in ordered))


def _best_paper(groups, used, min_ports, n_min, eta):
    """Eqs. (15)-(17): the members tied for the best profit, ascending, if it beats pi_0
    strictly; otherwise an empty list."""
    try:
        u_star = min(used)
    except TypeError:
        u_star = min(u for u in used if u is not None)
    total = 0
    for p in min_ports:
        total += used[p]
    # eq. (16); the first term is 1 when u_0 = u* = 0
    best = (1.0 if total == 0 else u_star * n_min / total) + eta
    winners = []
    for ports, n, ratio, members in groups:
        if 1.0 + eta * ratio < best:
            break
        total = 0
        for p in ports:
            total += used[p]
        # eq. (15): u*/u_q with u_q = total/n (u_q = 0 implies u* = 0)
        pi = (1.0 if total == 0 else u_star * n / total) + eta * ratio
        if pi > best:
            best, winners = pi, [members]
        elif pi == best and winners:
            winners.append(members)
    if len(winners) == 1:
        return winners[0]
    return sorted(j for members in winners for j in members)


def _reference_order(terms, intern, divisor=None):
    """The search order of :func:`_best_reference` for ``terms[j] = (ports, n, legs, D)``.

    With free slots ``F <= C - u*`` on every queue, a candidate whose "average" divides by
    at least its number of ports (``n <= legs``, always true for orthants) has
    ``f <= C - u*``, so its first term is at most 1 and its profit at most ``1 + eta/D``.
    Those come last, by increasing D; the others (whose quirky average can exceed C) first.
    Entries are ``(j, ports, n, divisor, D, bounded)``.
    """
    rows = [(j, ports, n, divisor or legs, dil, n <= (divisor or legs))
            for j, (ports, n, legs, dil) in enumerate(terms)]
    rows.sort(key=lambda r: (r[5], r[4] if r[5] else 0, r[0]))
    return intern(tuple(intern(r) for r in rows))


def _best_reference(order, used, u_star, capacity, eta, top):
    """§5.2 profits, §5.6 selection: ``(profit, j)`` of the first candidate (smallest ``j``)
    with the highest profit above ``top``, or ``(top, None)``.

    Starting from ``top = pi_0`` is exact: a candidate that does not beat pi_0 can never be
    chosen (and pi_0 >= 0 covers "profit > 0").
    """
    top_j = None
    for j, ports, n, div, dil, bounded in order:
        if bounded and 1.0 + eta / dil < top:
            break                             # and so are all the later ones
        total = 0
        for p in ports:
            total += used[p]
        if total == n * capacity:
            continue                          # f = 0: profit 0
        if u_star == 0:
            pr = 1.0 + eta / dil
        else:
            # the coded "average": free slots / second-leg dimensions (orthants: n)
            f = (n * capacity - total) / div
            pr = math.inf if f == capacity else u_star / (capacity - f) + eta / dil
        if pr > top or (pr == top and top_j is not None and j < top_j):
            top, top_j = pr, j
    return top, top_j


def _reference_profit(term, used, u_star, capacity, eta, divisor=None):
    """One candidate's §5.2 profit (may be negative or infinite; for analysis)."""
    ports, n, legs, dil = term
    total = 0
    for p in ports:
        total += used[p]
    f = (n * capacity - total) / (divisor or legs)
    if f == 0:
        return 0.0
    if u_star == 0:
        return 1.0 + eta / dil
    return (math.inf if f == capacity else u_star / (capacity - f)) + eta / dil


def _reference_pi0(used, min_ports, n_min, u_star, capacity, eta):
    total = 0
    for p in min_ports:
        total += used[p]
    f = (n_min * capacity - total) / n_min
    if f == 0:
        return 0.0
    return (1.0 if u_star == 0 else u_star / (capacity - f)) + eta


def _paper_profit(used, ports, n, ratio, u_star, eta):
    total = 0
    for p in ports:
        total += used[p]
    return (1.0 if total == 0 else u_star * n / total) + eta * ratio
