"""icsim: a cycle-level discrete-event simulator of interconnection networks.

The packages live under this name: ``icsim.simulator`` (the model and its engines),
``icsim.routing``, ``icsim.traffic``, ``icsim.experiments`` and the bundled ``icsim.configs``.
"""
