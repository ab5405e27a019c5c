"""Routing algorithms (DOR, ABR, POR, OFR, table routing), table generation and analysis."""
