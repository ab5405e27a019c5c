"""Traffic patterns that only a topology family defines (a dragonfly's group shift), each
module registering its patterns with :data:`icsim.traffic.patterns.PATTERNS` when the registry
scans this package."""
