"""The built-in routing algorithms, one module each; every module here registers its algorithms
with :data:`icsim.routing.registry.ROUTING` when imported (the registry imports them all)."""
