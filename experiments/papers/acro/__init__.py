"""ACRO virtual-layer assignment against LASH and LASH-TOR."""
