"""The ``traffic.jobs`` section: jobs of a closed-loop workload (``traffic.workload: app``;
:mod:`icsim.traffic.apps`), each a motif or a motif file on ranks placed on terminals."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class JobConfig(BaseModel):
    """One job: what it runs (``motif`` with its ``params``, or a motif ``file``), how many
    ranks (default: one per terminal of its placement, times ``ranks_per_node``) and where
    they run (``placement``: ``linear`` from terminal ``first``, ``random`` with ``seed``, or
    the terminals or torus coordinates in ``nodes``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(None, strict=True)
    motif: str | None = Field(None, strict=True)
    file: str | None = Field(None, strict=True)
    params: dict[str, Any] = Field(default_factory=dict)
    ranks: int | None = Field(None, strict=True, ge=1, le=1 << 20)
    ranks_per_node: int = Field(1, strict=True, ge=1, le=1024)
    placement: Literal["linear", "random", "list", "coords"] = "linear"
    nodes: list[Any] | None = None
    first: int = Field(0, strict=True, ge=0)
    seed: int | None = Field(None, strict=True, ge=0)
