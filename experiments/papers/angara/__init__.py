"""Angara graph-based routing tables: Table 2, random tori, simulated exchanges."""
