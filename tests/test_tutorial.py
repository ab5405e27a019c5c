"""docs/tutorial.ipynb runs top to bottom as a researcher would run it in Jupyter (a kernel of
its own, cell by cell), and says what it says it shows."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.ipynb"


def test_the_tutorial_notebook_runs_from_config_to_paper_figures(tmp_path):
    nb = nbformat.read(TUTORIAL, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
        "commit the notebook without outputs"
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = {i: c.outputs for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    assert not [o for out in outputs.values() for o in out if o.output_type == "error"]
    text = "\n".join(str(o.get("data", {}).get("text/plain", "")) + o.get("text", "")
                     for out in outputs.values() for o in out)
    assert "offered_packets_per_terminal_link_time" in text and "ci95" in text
    figures = [o for out in outputs.values() for o in out if "image/png" in o.get("data", {})]
    assert len(figures) >= 3                                 # the paper figures, shown
    assert "latency.pdf" in text and "latency.svg" in text
