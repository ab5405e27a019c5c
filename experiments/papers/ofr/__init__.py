"""OutFlank Routing (Versaci, ICPADS 2013): Tables 2 and 3."""
