"""The model's vocabulary, the lowest floor: topologies, units, the config schema, the packet,
input files, registries, errors and progress notes.  It imports nothing else of icsim."""
