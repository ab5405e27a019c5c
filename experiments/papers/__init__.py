"""The paper reproductions (OutFlank, Angara, ACRO), their registry (``icsim reproduce``) and the
papers' published numbers (``paper_data/``)."""
