"""Angara routing-table generation: the routing graph (paper §3.1), its deadlock-free
augmentation (§3.2), the BFS, SSSP and Genetic generators (§4), table metrics (docs/model.md
§8) and the Angara rule / deadlock checker.  Import the submodules directly, e.g.
``from icsim.routing.tables.generators import generate``."""
