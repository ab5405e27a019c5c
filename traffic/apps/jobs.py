"""Jobs on a machine: each a motif (or a motif file) on ranks placed on terminals, several
sharing the network at once; together the closed-loop workload both engines run.

Placement (``placement``): ``linear`` (rank r on the job's r-th terminal, ``ranks_per_node``
ranks per terminal, terminals in id order from ``first`` on), ``random`` (terminals drawn
without replacement with the job's seed), ``list`` (the terminals ``nodes``, in rank order,
each taking ``ranks_per_node`` consecutive ranks), ``coords`` (the same with torus
coordinates).  Several ranks on one terminal share its NIC (as MPI ranks of one node share
its network adapter); a message between two ranks of one terminal still crosses the NIC and
its router (the model has no shared-memory path).  Jobs may share terminals.

:class:`App` is what a run takes: the jobs' operations as one (:func:`~icsim.traffic.apps.ops.
concatenate`), each rank's terminal, the job of each rank, and per send its packet count.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from icsim.model.errors import Picklable
from icsim.traffic.apps.ops import (MAX_MESSAGES, MAX_OPS, MAX_PACKETS, SEND, AppError, Ops,
                                   concatenate)

PLACEMENTS = ("linear", "random", "list", "coords")


@dataclass(frozen=True)
class App:
    """The closed-loop workload: ``ops`` (every job's, renumbered), ``terminal`` (per rank),
    ``job`` (per rank: the job's index), ``names`` (per job), ``packets`` (per operation: a
    send's packet count, 0 otherwise), ``first_op`` (per job, and the total at the end)."""

    ops: Ops
    terminal: np.ndarray
    job: np.ndarray
    names: tuple[str, ...]
    packets: np.ndarray
    first_op: np.ndarray

    @property
    def total_packets(self) -> int:
        return int(self.packets.sum())


def place(placement: str, ranks: int, ranks_per_node: int, topology: Any,
          nodes: Sequence[Any] | None = None, first: int = 0, seed: int = 0) -> np.ndarray:
    """The terminal of each of ``ranks`` ranks (module docstring); an AppError names what is
    wrong: a terminal that does not exist or is out of service, too few terminals."""
    if ranks_per_node < 1:
        raise AppError(f"ranks_per_node: at least 1, got {ranks_per_node}")
    need = -(-ranks // ranks_per_node)
    T = topology.num_terminals
    if placement == "linear":
        terms = list(range(first, first + need))
    elif placement == "random":
        if need > T:
            raise AppError(f"ranks: {ranks} ranks at {ranks_per_node} per node need {need} "
                           f"terminals; the topology has {T}")
        terms = np.random.default_rng(seed).choice(T, need, replace=False).tolist()
    elif placement in ("list", "coords"):
        if nodes is None:
            raise AppError(f"nodes: placement {placement!r} needs the job's nodes")
        terms = [_terminal(v, placement, topology) for v in nodes]
        if len(set(terms)) != len(terms):
            raise AppError("nodes: a terminal is listed twice")
        if len(terms) < need:
            raise AppError(f"nodes: {ranks} ranks at {ranks_per_node} per node need {need} "
                           f"terminals; {len(terms)} are listed")
        terms = terms[:need]
    else:
        raise AppError(f"placement: {placement!r} is not one of {', '.join(PLACEMENTS)}")
    for t in terms:
        if not 0 <= t < T:
            raise AppError(f"nodes: rank placed on terminal {t}, which the topology does not "
                           f"have (0..{T - 1})")
    failed = topology.failed_nodes
    if failed:
        p = topology.terminals_per_router
        dead = [t for t in terms if t // p in failed]
        if dead:
            raise AppError(f"nodes: rank placed on terminal {dead[0]}, whose router has failed")
    return np.repeat(np.asarray(terms, dtype=np.int64), ranks_per_node)[:ranks]


def _terminal(v: Any, placement: str, topology: Any) -> int:
    if placement == "list":
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise AppError(f"nodes: {v!r} is not a terminal id")
        return int(v)
    if "coordinates" not in topology.capabilities:
        raise AppError("placement: coords needs a topology with coordinates (a torus or "
                       "mesh)")
    dims = tuple(topology.dims)
    try:
        c = tuple(int(x) for x in v)
    except (TypeError, ValueError):
        c = ()
    if len(c) != len(dims) or not all(0 <= x < k for x, k in zip(c, dims)):
        raise AppError(f"nodes: {v!r} is not a coordinate of the topology "
                       f"({' x '.join(map(str, dims))})")
    return int(topology.node(c)) * topology.terminals_per_router


def make_app(jobs: Sequence[tuple[str, Ops, np.ndarray]], packet_bytes: int) -> App:
    """``(name, ops, terminals of its ranks)`` per job, as one :class:`App`."""
    if not jobs:
        raise AppError("jobs: an application workload needs at least one job")
    ops = concatenate([o for _, o, _ in jobs])
    terminal = np.concatenate([np.asarray(t, dtype=np.int64) for _, _, t in jobs])
    job = np.concatenate([np.full(o.num_ranks, j, dtype=np.int32)
                          for j, (_, o, _) in enumerate(jobs)])
    packets = np.where(ops.kind == SEND, np.maximum(1, -(-ops.nbytes // packet_bytes)), 0)
    first = np.cumsum([0] + [o.num_ops for _, o, _ in jobs])
    return App(ops, terminal, job, tuple(n for n, _, _ in jobs), packets.astype(np.int64),
               first)


class JobError(Picklable, ValueError):
    """An error of job ``index`` of ``traffic.jobs`` (:func:`job_sizes`): ``error``, what
    was wrong with it."""

    def __init__(self, index: int, error: Exception):
        super().__init__(str(error))
        self.index, self.error = index, error


def _job_seed(job: Any, index: int, seed: int) -> int:
    return job.seed if job.seed is not None else seed + index


def _job_ranks(job: Any, topology: Any) -> int:
    """A motif job's ranks: ``ranks``, else one per terminal of its placement, times
    ``ranks_per_node``."""
    if job.ranks is not None:
        return job.ranks
    T = topology.num_terminals
    room = {"linear": T - job.first, "random": T}.get(job.placement, len(job.nodes or ()))
    return max(1, room) * job.ranks_per_node


def job_sizes(jobs: Sequence[Any], topology: Any, seed: int,
              packet_bytes: int) -> tuple[list[Any], dict[str, Any]]:
    """How big each job of ``traffic.jobs`` is (a :class:`~icsim.traffic.apps.ops.Counter`:
    messages, packets, operations, compute time per rank), counted from the motifs'
    parameters and the motif files' lines before anything is built, and the motif files'
    lines as read (to build from, :func:`job_parts`).  An AppError (its message starting with
    ``<index>:``) names the job that is wrong alone, or that takes the jobs together past a
    limit of :mod:`~icsim.traffic.apps.ops` (a trace's: 10^7 messages and packets): a
    :class:`JobError` carrying the job's index and the error (an AppError, the motif file's
    InputFileError or an unknown motif's name)."""
    from icsim.traffic.apps.files import read_motif_rows
    from icsim.traffic.apps.motifs import motif_size

    sizes, files = [], {}
    messages = packets = ops = 0
    for index, job in enumerate(jobs):
        try:
            if (job.motif is None) == (job.file is None):
                raise AppError("motif: a job runs a motif or a motif file (one of motif, "
                               "file)")
            if job.file is not None:
                lines = files.get(job.file) or read_motif_rows(job.file)
                files[job.file] = lines
                size = lines.size(packet_bytes)
            else:
                size = motif_size(job.motif, _job_ranks(job, topology),
                                  _job_seed(job, index, seed), job.params, packet_bytes)
            messages, packets, ops = (messages + size.messages, packets + size.packets,
                                      ops + size.ops)
            for count, limit, what in ((messages, MAX_MESSAGES, "messages"),
                                       (packets, MAX_PACKETS, f"packets of {packet_bytes} "
                                                              f"bytes"),
                                       (ops, MAX_OPS, "operations")):
                if count > limit:
                    raise AppError(f"the jobs up to this one make {count:,} {what}, more than "
                                   f"the limit of {limit:,} {what.split()[0]} of an "
                                   f"application (as of a trace)")
        except ValueError as exc:        # AppError, a motif file's or an unknown motif's
            raise JobError(index, exc) from None
        sizes.append(size)
    return sizes, files


def job_parts(job: Any, index: int, topology: Any, seed: int,
              files: dict[str, Any] | None = None) -> tuple[str, Ops, np.ndarray]:
    """A ``traffic.jobs`` entry (:class:`~icsim.model.job_config.JobConfig`) as ``(name,
    operations, terminals of its ranks)``; its stream is ``job.seed``, else the run's seed
    plus its index.  ``files``: motif files' lines already read (:func:`job_sizes`).
    Errors: :class:`AppError`, or the motif file's ``InputFileError``."""
    from icsim.traffic.apps.files import motif_file_ops, read_motif_rows
    from icsim.traffic.apps.motifs import motif_ops

    if (job.motif is None) == (job.file is None):
        raise AppError("motif: a job runs a motif or a motif file (one of motif, file)")
    job_seed = _job_seed(job, index, seed)
    if job.file is not None:
        lines = (files or {}).get(job.file) or read_motif_rows(job.file)
        ops = motif_file_ops(lines)
        if job.ranks is not None and job.ranks != ops.num_ranks:
            raise AppError(f"ranks: {job.ranks}, but the motif file has {ops.num_ranks} ranks")
    else:
        ops = motif_ops(job.motif, _job_ranks(job, topology), job_seed, job.params)
    terminals = place(job.placement, ops.num_ranks, job.ranks_per_node, topology, job.nodes,
                      job.first, job_seed)
    name = job.name or (job.motif if job.motif is not None else os.path.basename(job.file))
    return name, ops, terminals
