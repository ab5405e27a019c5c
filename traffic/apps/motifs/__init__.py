"""The motif library: each motif writes a job's operations into a
:class:`~icsim.traffic.apps.ops.Builder` (one per job, its ranks numbered 0 .. n-1), with the
parameters the literature uses.  A motif registers itself where it is defined::

    @MOTIFS.register("halo3d")
    def halo3d(b: Builder, rng: np.random.Generator, *, iterations: int = 10, ...) -> None: ...

``rng`` is the job's own stream (compute times drawn from a distribution, random peers); a
motif given the same parameters and stream writes the same operations.  A bad parameter is an
:class:`~icsim.traffic.apps.ops.AppError` naming it.  Compute times are given as
:func:`compute_ps` reads them.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from icsim.model.registry import Registry
from icsim.traffic.apps.ops import AppError, Builder, Counter

__all__ = ["MOTIFS", "Compute", "compute_ps", "motif_ops", "motif_size"]

MOTIFS: Registry[Callable[..., None]] = Registry("motif", packages=("icsim.traffic.apps.motifs",))


#: the longest computation a motif's ``compute_us`` may give, µs (a motif file's limit)
MAX_US = 1e6


class Compute:
    """A compute phase's time: a number of µs (fixed), or a mapping ``{mean_us: m,
    dist: fixed | exponential | normal | uniform, sd_us: s}`` (normal: truncated at 0;
    uniform: mean ± sd_us).  :meth:`draw` gives ps, one draw of the stream per call for a
    distribution, none for a fixed time."""

    DISTS = ("fixed", "exponential", "normal", "uniform")

    def __init__(self, spec: Any, name: str = "compute_us"):
        if isinstance(spec, (int, float)) and not isinstance(spec, bool):
            spec = {"mean_us": spec}
        if not isinstance(spec, dict):
            raise AppError(f"{name}: a number of µs or {{mean_us, dist, sd_us}}, got {spec!r}")
        unknown = set(spec) - {"mean_us", "dist", "sd_us"}
        if unknown:
            raise AppError(f"{name}: unknown key {sorted(unknown)[0]!r} (mean_us, dist, sd_us)")
        for key in ("mean_us", "sd_us"):
            value = spec.get(key, 0.0)
            if (isinstance(value, bool) or not isinstance(value, (int, float, np.number))
                    or not 0 <= value <= MAX_US):
                raise AppError(f"{name}: {key} must be a number of µs from 0 to {MAX_US:.0e} "
                               f"(1 s), got {value!r}")
        self.mean = float(spec.get("mean_us", 0.0))
        self.dist = spec.get("dist", "fixed")
        self.sd = float(spec.get("sd_us", 0.0))
        if self.dist not in self.DISTS:
            raise AppError(f"{name}: dist {self.dist!r} is not one of {', '.join(self.DISTS)}")

    def draw(self, rng: np.random.Generator) -> int:
        """One time in ps (at most 1 s: a draw from a distribution's tail is cut there)."""
        if self.dist == "fixed":
            us = self.mean
        elif self.dist == "exponential":
            us = rng.exponential(self.mean) if self.mean > 0 else 0.0
        elif self.dist == "normal":
            us = max(0.0, rng.normal(self.mean, self.sd))
        else:
            us = rng.uniform(max(0.0, self.mean - self.sd), self.mean + self.sd)
        return int(round(min(us, MAX_US) * 1e6))


def compute_ps(spec: Any, rng: np.random.Generator, name: str = "compute_us") -> int:
    """One compute time in ps (:class:`Compute`)."""
    return Compute(spec, name).draw(rng)


def _write(name: str, b: Builder, seed: int, params: dict | None) -> None:
    fn = MOTIFS.get(name)
    try:
        fn(b, np.random.default_rng(seed), **(params or {}))
    except TypeError as exc:                       # an unknown or missing parameter
        raise AppError(f"motif {name}: {exc}") from None


def motif_ops(name: str, ranks: int, seed: int, params: dict | None = None):
    """The checked operations of motif ``name`` on ``ranks`` ranks."""
    b = Builder(ranks)
    _write(name, b, seed, params)
    return b.build()


def motif_size(name: str, ranks: int, seed: int, params: dict | None,
               packet_bytes: int) -> Counter:
    """How big motif ``name`` is on ``ranks`` ranks (:class:`~icsim.traffic.apps.ops.Counter`:
    its messages, packets, operations and compute time, counted without building it); an
    AppError for a bad parameter, as :func:`motif_ops` gives it, or past a limit."""
    b = Counter(ranks, packet_bytes)
    _write(name, b, seed, params)
    b.check()
    return b
