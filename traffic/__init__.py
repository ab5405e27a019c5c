"""Traffic: destination patterns, load normalisation, injection processes and workloads."""
