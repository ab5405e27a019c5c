"""How figures look: ``default`` (for the screen and the committed results) or ``paper`` (a
figure a journal takes).

``paper`` gives:

* no figure title (what the default's title says belongs in the caption), short panel titles;
* a journal's column widths and fonts: 3.5 in wide for one panel (one column), 7.16 in for
  several (two columns), 8-point text, TrueType fonts embedded in PDF;
* vector files: PDF and SVG by default, beside a PNG to look at;
* Okabe and Ito's colour-blind-safe palette, led by black, each curve also with its own marker
  and dash pattern, so that curves stay apart printed in grey;
* curves that coincide drawn side by side, a few points apart (and, in every style, named
  in the legend: ``ofr (= abr)``); γ* marked by a tick on the top edge in the curve's colour
  and marker, ticks at the same load set apart.

What every style does alike (the figures' own rules, :mod:`.plots`): no line into a saturated
run, one latency scale (linear or logarithmic) for every panel of a figure, the load axis in γ
with the offered load in packets per terminal per link time beside it (docs/model.md §6),
heat-map axes named by coordinate.

The style is an argument of every figure function (``style="paper"``) and of the commands that
draw (``--style paper`` on ``icsim plot``, ``icsim sweep`` and ``icsim reproduce``); a
reproduction's own figures take it from :func:`using_style`, which the command line and
``icsim.reproduce(..., style="paper")`` enter around the reproduction (a context variable, as
``decimal`` keeps its context: nothing global is changed, and matplotlib's settings are
restored after).
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Any, Iterator

#: Okabe and Ito's colour-blind-safe palette, black first (its order keeps neighbours apart in
#: grey as well as in colour)
OKABE_ITO = ("#000000", "#E69F00", "#0072B2", "#D55E00", "#56B4E9", "#009E73", "#CC79A7",
             "#F0E442")
#: matplotlib's default cycle (what the default style's figures have always used)
TABLEAU = tuple(f"C{i}" for i in range(10))
#: one dash pattern per curve in the paper style
DASHES = ("-", (0, (5, 1.5)), (0, (1, 1.2)), (0, (5, 1.5, 1, 1.5)), (0, (3, 1, 1, 1, 1, 1)),
          (0, (8, 2)), (0, (2, 2)), (0, (5, 1, 1, 1, 1, 1, 1, 1)))


@dataclass(frozen=True)
class FigureStyle:
    """What a style fixes (module docstring)."""

    name: str
    #: the figure's title block (definitions, rules) above the panels
    titles: bool
    #: inches per panel (default style), or None: the column widths below
    panel_size: tuple[float, float] | None
    #: one-column and two-column widths (inches) and a panel's height (paper style)
    column_widths: tuple[float, float] = (3.5, 7.16)
    panel_height: float = 2.3
    font_size: float = 10.0
    colors: tuple[str, ...] = TABLEAU
    markers: tuple[str, ...] = ("o", "s", "D", "P", "X", "v", "<", ">", "p", "h")
    dashes: tuple[Any, ...] = ("-",)
    line_width: float = 1.3
    marker_size: float = 6.0
    formats: tuple[str, ...] = ("png", "svg")
    #: set curves that coincide apart, and mark γ* by ticks on the top edge
    dodge: bool = False
    #: matplotlib settings while a figure is drawn and written
    rc: dict[str, Any] = field(default_factory=dict)

    def color(self, i: int) -> str:
        return self.colors[i % len(self.colors)]

    def marker(self, i: int) -> str:
        return self.markers[i % len(self.markers)]

    def dash(self, i: int) -> Any:
        return self.dashes[i % len(self.dashes)]

    def size(self, i: int) -> float:
        """A curve's marker size: the default style draws earlier curves a little larger, so
        that equal curves stay visible; the paper style sets them apart instead."""
        if self.dodge:
            return self.marker_size
        return max(3.5, self.marker_size - 0.5 * i)

    def figure_size(self, n_panels: int, ncols: int, nrows: int, legend_rows: int
                    ) -> tuple[float, float]:
        """Width and height of a figure of panels, legends and (default) its title block."""
        if self.panel_size is not None:
            w, h = self.panel_size
            height = h + 0.22 * legend_rows + 0.9      # axes, its legend below, labels
            width = w * ncols + (1.2 if ncols == 1 else 0.0)   # room for a lone title
            return width, height * nrows + 1.3
        width = self.column_widths[0 if n_panels <= 1 else 1]
        return width, self.panel_height * nrows + 0.25 + 0.16 * legend_rows


DEFAULT = FigureStyle("default", titles=True, panel_size=(5.2, 3.6))
PAPER = FigureStyle(
    "paper", titles=False, panel_size=None, font_size=8.0, colors=OKABE_ITO,
    markers=("o", "s", "^", "D", "v", "P", "X", "<"), dashes=DASHES, line_width=1.0,
    marker_size=3.8, formats=("pdf", "svg", "png"), dodge=True,
    rc={"font.size": 8.0, "axes.titlesize": 8.0, "axes.labelsize": 8.0,
        "xtick.labelsize": 7.0, "ytick.labelsize": 7.0, "legend.fontsize": 7.0,
        "axes.linewidth": 0.6, "grid.linewidth": 0.4, "lines.linewidth": 1.0,
        "xtick.major.width": 0.6, "ytick.major.width": 0.6, "pdf.fonttype": 42,
        "ps.fonttype": 42, "svg.fonttype": "path",
        "axes.prop_cycle": None})      # filled in by :func:`rc_of`
STYLES = {s.name: s for s in (DEFAULT, PAPER)}

_CURRENT: contextvars.ContextVar[str] = contextvars.ContextVar("icsim_figure_style",
                                                               default="default")


def style_of(style: str | FigureStyle | None = None) -> FigureStyle:
    """The style named (``None``: the one :func:`using_style` chose, else ``default``);
    ``ValueError`` for an unknown name."""
    if isinstance(style, FigureStyle):
        return style
    name = _CURRENT.get() if style is None else style
    if name not in STYLES:
        raise ValueError(f"style: expected one of {', '.join(map(repr, STYLES))}, got {name!r}")
    return STYLES[name]


def rc_of(style: FigureStyle) -> dict[str, Any]:
    """The style's matplotlib settings, its palette as the colour cycle."""
    if not style.rc:
        return {}
    from cycler import cycler

    return {**style.rc, "axes.prop_cycle": cycler(color=list(style.colors))}


@contextlib.contextmanager
def drawing(style: FigureStyle) -> Iterator[None]:
    """matplotlib's settings for drawing a figure in ``style`` (restored after)."""
    rc = rc_of(style)
    if not rc:
        yield
        return
    import matplotlib

    with matplotlib.rc_context(rc):
        yield


@contextlib.contextmanager
def using_style(style: str | None) -> Iterator[FigureStyle]:
    """Draw every figure made inside in ``style`` (``None``: leave it as it is): the figure
    functions' default, and matplotlib's settings for figures drawn by other code (a
    reproduction's bar charts)."""
    chosen = style_of(style)
    if style is None:
        yield chosen
        return
    token = _CURRENT.set(chosen.name)
    try:
        with drawing(chosen):
            yield chosen
    finally:
        _CURRENT.reset(token)


def add_style_argument(parser: Any) -> None:
    """``--style default|paper`` on a command that draws."""
    parser.add_argument("--style", choices=tuple(STYLES), default=None,
                        help="how figures look: default, or paper (no title, one- or "
                             "two-column size, 8-pt fonts, a colour-blind-safe palette that "
                             "prints in grey, PDF and SVG)")
