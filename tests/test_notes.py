"""Long steps before a run say once on stderr how far they are (``model/notes.py``), and
saying so changes nothing they make."""

from __future__ import annotations

import numpy as np
import pytest

import icsim.routing.outflank.export
from icsim.model import notes
from icsim.model.notes import Note
from icsim.model.topology import Torus
from icsim.routing.layers import get_assigner
from icsim.routing.layers.minimal import minimal_table
from icsim.routing.outflank import OrthantPlanner, OutflankPlanner
from icsim.routing.tables.generators import generate


def test_a_quick_step_says_nothing_and_a_slow_one_says_once(monkeypatch, capsys):
    note = Note("building", total=10)
    for done in range(1, 11):
        note(done)
    assert capsys.readouterr().err == ""
    times = iter([0.0, 4.0, 12.0, 30.0])      # perf_counter: at the start, then per call
    monkeypatch.setattr(notes, "perf_counter", lambda: next(times))
    note = Note("building", total=10)
    for done in (1, 3, 5):
        note(done)
    assert capsys.readouterr().err == "icsim: building: 3 of 10 in 12 s, about 28 s more\n"


STEPS = {
    "bfs": ("BFS table, routes from each source: 1 of 16",
            lambda: generate("bfs", Torus((4, 4))).routes),
    "sssp": ("SSSP table, each source's unique routes: 1 of 16",
             lambda: generate("sssp", Torus((4, 4))).routes),
    "lash": ("LASH layers, route by route: 1 of 240",
             lambda: get_assigner("lash")(minimal_table(Torus((4, 4)))).layers),
    "lash_tor": ("LASH-TOR layers, route by route: 1 of 240",
                 lambda: get_assigner("lash_tor")(minimal_table(Torus((4, 4)))).layers),
    "ofr": ("building OFR's injection plans, one per offset key (once per process): 1 of 225",
            lambda: tuple(OutflankPlanner(Torus((8, 8)), variant="reference").export())),
    "por": ("building POR's injection plans, one per offset key (once per process): 1 of 64",
            lambda: tuple(OrthantPlanner(Torus((8, 8))).export())),
}


@pytest.mark.parametrize("step", STEPS)
def test_each_long_step_says_how_far_it_is_and_makes_the_same(step, monkeypatch, capsys):
    said, make = STEPS[step]
    quiet = make()
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(icsim.routing.outflank.export, "_EXPORTS", notes.Kept(4))  # exports are made once per process
    monkeypatch.setattr(notes, "NOTE_AFTER_S", -1.0)        # every step is "slow"
    loud = make()
    err = capsys.readouterr().err
    assert err.startswith(f"icsim: {said} in 0 s, about ") and err.count("\n") == 1
    if isinstance(quiet, tuple):
        assert all(np.array_equal(a, b) for a, b in zip(quiet, loud))
    else:
        assert loud == quiet


def test_a_slow_set_up_says_how_far_it_is_on_a_terminal_only(monkeypatch, capsys):
    import re

    import icsim.simulator.build as building
    from tests.test_families import DRAGONFLY, config

    cfg = config(DRAGONFLY, "dfly_min")
    quiet = building.build(cfg)
    monkeypatch.setattr(building, "SETUP_NOTE_AFTER_S", -1.0)       # every set-up is "slow"
    building.build(cfg)
    assert capsys.readouterr().err == ""                             # not a terminal
    monkeypatch.setattr(notes, "_terminal", lambda stream: True)
    loud = building.build(cfg)
    err = capsys.readouterr().err
    assert re.fullmatch(r"icsim: setting up dragonfly.*, dfly_min: [0-3] of 4 in 0 s "
                        r"\(now: the [a-z' ]+\)\n", err), err
    assert loud.spec.num_terminals == quiet.spec.num_terminals
    assert np.array_equal(loud.workload.src, quiet.workload.src)


def test_a_timed_note_speaks_in_the_middle_of_a_long_step_and_not_after_it(capsys):
    import time

    with Note("building", total=3, after_s=0.05, estimate=False, timer=True) as note:
        note(1, "now: the second")
        for _ in range(200):                        # the timer's thread speaks meanwhile
            if note.said:
                break
            time.sleep(0.05)
        note(2, "now: the third")
    assert capsys.readouterr().err == "icsim: building: 1 of 3 in 0 s (now: the second)\n"
    with Note("building", total=3, after_s=0.2, timer=True) as note:
        note(1)                                     # done before it is due: nothing said
    time.sleep(0.4)
    assert capsys.readouterr().err == ""
