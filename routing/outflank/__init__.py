"""Injection-time decisions of OutFlank Routing (OFR) and Pick-Orthant Routing (POR).

When a packet enters the network at its source ``s``, OFR may give it one intermediate
destination node (IDN) and POR fixes one sign per dimension (an orthant).  This module
answers those two questions, and nothing else: it knows neither queues nor time.  The routing
classes hand it the occupancy of the source router's adaptive output queues and apply the
answer.  Everything is a pure function of a :class:`~icsim.model.topology.Torus`, the
source, the destination and that occupancy.

Conventions
-----------
* Every dimension must be a ring of at least 3 nodes (``Torus.is_ring``); anything else is
  a ``ValueError``.
* Ports are the topology's: ``2*dim`` for +, ``2*dim + 1`` for -.  ``used[port]`` is the
  number of used slots (an integer) of the adaptive queue of ``port`` at ``s`` (``None``
  for an absent port; a torus of rings has none).
* ``d_i`` is the signed minimal offset ``s -> t`` of :meth:`Torus.offsets` (a k/2 tie is
  reported as ``+k/2``); the *minimal direction* of a dimension is the sign of ``d_i``.
  The paper calls dimensions with ``d_i != 0`` "mu-nu" and those with ``d_i == 0``
  "nu-nu".
* ``both_on_tie`` (the paper rules only): at an exact k/2 offset both directions are
  minimal.  It changes which links count as minimal in :func:`admissible` and which queues
  are averaged in the paper profit.  The reference rules always use the reference code's
  convention (one direction per dimension, + at a tie; docs/model.md §5a.6), so a
  ``reference`` candidate set or profit ignores ``both_on_tie``.

Two variants
------------
``"paper"`` follows the paper (§3, eqs. 1-17); ``"reference"`` reproduces what the paper's
OMNeT++ simulator actually coded (docs/model.md §5a.8–§5a.12).  The candidate sets
(``candidates=`` / ``variant=``) and the profit (``profit=``) are chosen independently.

Wraparound IDNs (eq. 1).  Paper: per dimension the two points
``floor((s_i + t_i + beta_i k_i) / 2) mod k_i``; all ``2^n`` combinations.  The set is exactly
eq. (1)'s, but it is enumerated with ``beta_i = 0`` meaning "the point on the minimal arc"
(for ``d_i = 0``: ``s_i`` itself), dimension 0 varying slowest.  Eq. (1)'s literal labels
swap when ``s_i + t_i`` wraps past ``k_i``; the relative labelling makes the order (which
breaks ties) translation-invariant.  Reference: per dimension ``int`` = the coded "half"
(below) and ``ext = (int + k//2) mod k``, in the coded order (int,int,int), (int,int,ext), ...
(dimension 0 slowest).  For even k this is the same set as eq. (1); for odd k it can differ
by one.

Outflank IDNs (eqs. 2-3).  Paper: ``q(lambda)`` of :func:`outflank_idn`, where for a mu-nu
dimension ``lambda_i`` is read relative to the minimal direction ``m_i`` (the paper's
examples assume positive minimal directions w.l.o.g.): ``+1`` is Delta beyond t
(``t_i + m_i Delta``, leaving the minimal orthant through t's non-minimal link), ``-1`` is
Delta behind s (``s_i - m_i Delta``, leaving through s's non-minimal link) and ``0`` is the
midpoint *along the minimal path*, ``s_i + m_i floor(|d_i|/2)``.  Eq. (2) writes the
midpoint as ``floor((s_i + t_i)/2)``, which lies on the far side of the ring when the
minimal path wraps (e.g. k = 8, s_i = 1, t_i = 6 gives 3, but the minimal path is
1, 0, 7, 6): that would turn an outflank IDN into a wraparound one, so the midpoint along
the path is used.  For a nu-nu dimension ``lambda_i`` is absolute: ``s_i + lambda_i Delta``
(eq. 3).  The lambda sets (:func:`outflank_lambdas`) are

* n = 3: eqs. (9)-(14) exactly, in the paper's order;
* n = 2: Remark 1's small-dilation covering set ``q0, q1, q4, q5`` of Example 1 for
  collinear s, t and the two outflank IDNs of Example 1 for non-collinear s, t;
* any n (the same rule, which reproduces both lists above):

  - at least two mu-nu dimensions: for every pair ``a < b`` of them (pairs in reverse
    lexicographic order), ``(a behind s, b beyond t)`` then ``(a beyond t, b behind s)``,
    the other mu-nu dimensions at their midpoints and the nu-nu ones at ``s_i``; then for
    every nu-nu dimension ``j`` (ascending), ``s_j + Delta`` and ``s_j - Delta`` with all
    mu-nu dimensions at their midpoints;
  - exactly one mu-nu dimension ``m`` and one nu-nu dimension ``j`` (n = 2): ``(m behind,
    j+)``, ``(m mid, j+)``, ``(m mid, j-)``, ``(m beyond, j-)``;
  - one mu-nu dimension ``m`` and nu-nu dimensions ``j0 < j1 < ...``: for each ``j``,
    ``(j+, m X)`` then ``(j-, m mid)``, where X is "beyond" for ``j0``, "behind" for ``j1``
    and "mid" for the others (eqs. 13-14 for n = 3);
  - n = 1: none (on a single ring the only non-minimal route is the wraparound one).

  Without wraparound (``|d_i| + Delta < k_i/2``) these use every non-minimal link of s and
  of t, and all are admissible; every candidate moves at most two coordinates off s's
  minimal path.  (Example 1 lists the two non-collinear lambdas as ``(1,-1), (-1,1)`` but
  the links as ``(x-,y+), (x+,y-)``, which is ``(-1,1), (1,-1)``; the order here follows
  the links and eq. 11.)

Reference: docs/model.md §5a.9 with its coded order and quirky "half"
(:func:`reference_half`); ``ofshort = true`` (two collinear candidates, ``(i0 - Delta, mid)``
and ``(i1 - Delta, mid)``).  The code is 3-D only; for other n the same rules are applied
per case (all ordered pairs for two or more mu-nu dimensions, then ``+-Delta`` in each
nu-nu dimension; one ``-Delta`` candidate per nu-nu dimension when collinear).

Both variants keep only :func:`admissible` candidates (order preserved, duplicates dropped).

Dilation bound
--------------
Write ``delta(q) = d(s,q) + d(q,t) - d(s,t) = sum_i delta_i`` per dimension.  For a paper
OIDN, ``delta_i = 0`` where ``lambda_i = 0`` (the midpoint lies on the minimal path) and,
by the triangle inequality on the ring, ``0 <= delta_i <= 2 Delta`` elsewhere, with
``delta_i = 2 Delta`` exactly when ``|d_i| + Delta <= k_i / 2`` (``d_i = 0`` for a nu-nu
dimension).  Otherwise the coordinate wraps round (Remark 2: the OIDN "jumps" into another
orthant) and the detour is shorter: ``delta_i = k_i - 2|d_i| < 2 Delta`` when
``Delta <= k_i/2``.  So Remark 2 never breaks the bound; for any lambda
``delta(q) <= 2 Delta * #{i: lambda_i != 0} <= 2 n Delta`` (eq. 6), and for the sets above,
which move at most two coordinates, ``delta(q) <= 4 Delta`` whatever n is.  Wraparound IDNs
are not bounded by a constant (``delta_i = k_i - 2|d_i|`` in each flipped dimension, minus
one for an odd ring with ``d_i = 0``), nor are reference OIDNs whose quirky "half" lands on
the far side of the ring.

Profits
-------
``profit="paper"``: eqs. (15)-(16), ``pi_q = u*/u_q + eta d/d~_q`` with ``u*`` the least
used present adaptive queue of s, ``u_q`` the mean used slots over the minimal ports
``s -> q`` (first term 1 when ``u_q = u* = 0``), ``pi_0 = u*/u_0 + eta``.  Derouting needs
``max pi_q > pi_0`` strictly; equal best candidates are drawn uniformly with ``rng`` or else
the first in candidate order wins (OIDNs before WIDNs).  Equality is exact float equality.
POR uses the same with an orthant's ports (non-zero-offset dimensions) and its path length.

``profit="reference"``: docs/model.md §5a.8 and §5a.12, with free slots
``F = capacity - used``: profit 0 when the candidate's average free ``f`` is 0, otherwise
(1 if ``u* = 0`` else ``u*/(C - f)``) ``+ eta / D``; an IDN's ``f`` divides the first leg's
free slots by the number of dimensions of the *second* leg, an orthant's by ``n`` (3 in
the code); the best OIDN and best WIDN (first wins ties, profit > 0) compete, the OIDN wins
an exact tie, and the winner must beat ``pi_0`` strictly.  ``rng`` is not used.

Speed
-----
:class:`OutflankPlanner` and :class:`OrthantPlanner` cache, per offset vector (and per
"half" position for the reference rules), the candidate lists with their first-leg ports
and dilations; a decision is then a dictionary look-up and a loop over a dozen candidates.
:func:`choose_idn` and :func:`choose_orthant` build a fresh planner on every call: routing
classes should keep one planner per run.  Measured (CPython 3.11, CPU time, warm caches,
random pairs, idle to fully busy routers): 1.2-3.7 us per decision on 8x8x8 and 16x16x16,
OFR and POR, both variants.  A plan takes 0.1-0.2 ms to build, once per key; all keys of a
16x16x16 torus take about 9 MB (paper) or 36 MB (reference, keyed by "half" too).

For the compiled engine, ``export()`` builds every key at once and hands the plans over as
flat numpy arrays (:class:`IdnPlans`, :class:`OrthantPlans`), over which
``icsim.simulator.engines.compiled.decide`` restates the decision (0.1-0.3 us).  On
16x16x16 that takes 0.5-0.8 s of CPU time and 2 MB of arrays for the paper OFR rules and
POR, 5-6 s and 15 MB for the reference OFR rules (29,791 keys).

Examples
--------
>>> from icsim.model.topology import Torus
>>> topo = Torus((16, 16))
>>> s, t = topo.node((1, 1)), topo.node((4, 1))              # collinear along x, d = 3
>>> [topo.coords(q) for q in outflank_idns(topo, s, t)]      # Remark 1: q0, q1, q4, q5
[(15, 3), (2, 3), (2, 15), (6, 15)]
>>> [round(dilation(topo, s, t, q) * 3) for q in outflank_idns(topo, s, t)]   # d + 4D, d + 2D
[11, 7, 7, 11]

On an 8x8 torus with the x+ queue full and every other queue idle, eq. (15) only rewards
routes that leave through idle queues (u* = 0): OFR takes the wraparound IDN on the far arc
(5 hops instead of 3) and POR the - orthant.

>>> topo = Torus((8, 8))
>>> s, t = topo.node((1, 1)), topo.node((4, 1))
>>> q, kind = choose_idn(topo, s, t, [8, 0, 0, 0], capacity=8)
>>> topo.coords(q), kind
((6, 1), 'wraparound')
>>> choose_orthant(topo, s, t, [8, 0, 0, 0], capacity=8)
((-1, 0), True)
"""

from icsim.routing.outflank.candidates import (OUTFLANK, VARIANTS, WRAPAROUND, admissible, dilation,
                                               orthant_dor_port, orthant_ports, orthant_select,
                                               outflank_idn, outflank_lambdas, reference_half)
from icsim.routing.outflank.export import KIND_CODES, PROFIT_CODES, IdnPlans, OrthantPlans
from icsim.routing.outflank.planners import (Orthant, OrthantPlanner, OutflankPlanner, choose_idn,
                                             choose_orthant, outflank_idns, wraparound_idns)

__all__ = ["IdnPlans", "KIND_CODES", "OUTFLANK", "Orthant", "OrthantPlanner", "OrthantPlans", "OutflankPlanner", "PROFIT_CODES", "VARIANTS", "WRAPAROUND", "admissible", "choose_idn", "choose_orthant", "dilation", "orthant_dor_port", "orthant_ports", "orthant_select", "outflank_idn", "outflank_idns", "outflank_lambdas", "reference_half", "wraparound_idns"]
