"""The SVG plots are well-formed XML with one mark per model, whatever the names."""

import xml.etree.ElementTree as ET

import pytest

from leaderboard.models import RunTrigger
from leaderboard.pages import board_plots, plots, selectors
from leaderboard.runs import services

from .factories import make_votes

NS = {"svg": "http://www.w3.org/2000/svg"}


def marks(root):
    return [el for el in root.iter() if "mark" in (el.get("class") or "").split()]


def points(n):
    names = [f"model-{i}" for i in range(n - 1)] + ['<script>"evil" & co</script>']
    return [
        plots.Interval(name, 1200 - 10 * i, 1190 - 10 * i, 1215 - 10 * i)
        for i, name in enumerate(names)
    ]


@pytest.mark.parametrize("n", [1, 7, 60])
def test_interval_chart_has_one_dot_per_model(n):
    svg = plots.confidence_interval_chart(points(n), title="Ratings & intervals")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    found = marks(root)
    assert len(found) == n
    assert [m.get("data-model") for m in found] == [p.name for p in points(n)]
    assert "<script>" not in svg  # escaped
    assert len(root.findall(".//svg:line[@class='lb-whisker']", NS)) == n


def test_interval_chart_places_dots_by_rating():
    root = ET.fromstring(plots.confidence_interval_chart(points(3), title="t"))
    xs = [float(m.get("cx")) for m in marks(root)]
    assert xs == sorted(xs, reverse=True)  # best first, highest rating furthest right


def test_win_rate_bars_one_per_model_and_scaled():
    root = ET.fromstring(plots.bar_chart(["a", "b", "c"], [0.8, 0.5, 0.2], title="Win rate"))
    bars = marks(root)
    assert len(bars) == 3
    widths = [float(b.get("width")) for b in bars]
    assert widths[0] == pytest.approx(4 * widths[2])


def test_heatmaps_have_a_cell_per_pair_and_a_label_per_model():
    names = ["a", "b", "c", "d"]
    frac, count = plots.pair_matrices(
        4, [[0, 1, 6, 2, 1, 1], [0, 2, 3, 3, 0, 0], [1, 3, 0, 4, 2, 0]]
    )
    assert frac[0][1] == pytest.approx(0.75) and frac[1][0] == pytest.approx(0.25)
    assert count[0][1] == 10 and frac[2][3] is None and count[2][3] is None
    for fmt, matrix in (("fraction", frac), ("count", count)):
        root = ET.fromstring(plots.heatmap(names, matrix, title="t", kind=fmt, fmt=fmt))
        cells = [el for el in root.iter() if "cell" in (el.get("class") or "").split()]
        assert len(cells) == 16
        labels = [el for el in root.iter() if "lb-rowlabel" in (el.get("class") or "")]
        assert [el.get("data-model") for el in labels] == names


def test_empty_plots_still_parse():
    for svg in (
        plots.confidence_interval_chart([], title="t"),
        plots.bar_chart([], [], title="t"),
        plots.heatmap(["solo"], [[None]], title="t", kind="k"),
    ):
        ET.fromstring(svg)


@pytest.mark.django_db
def test_the_board_plots_show_every_rated_model(settings):
    settings.ARENA_LEADERBOARD_PLOT_MODELS = 3
    make_votes(
        [
            ("a1", "a2", "model_a", 6),
            ("a2", "a3", "model_a", 6),
            ("a3", "a4", "tie", 6),
            ("a4", "a1", "model_b", 6),
            ("a5", "a1", "model_b", 2),
        ]
    )
    services.ratings_run(trigger=RunTrigger.COMMAND)
    page = selectors.leaderboard_view(query=selectors.leaderboard_query_clean(board="text"))
    svgs = board_plots.board_plots(page=page)
    assert len(page.rows) == 4  # a5 is provisional
    assert len(marks(ET.fromstring(svgs["ci"]))) == 4
    assert len(marks(ET.fromstring(svgs["winrate"]))) == 4
    fraction = ET.fromstring(svgs["winfraction"])
    assert len([el for el in fraction.iter() if "cell" in (el.get("class") or "").split()]) == 9


def test_a_line_chart_draws_a_line_per_series_and_a_dot_per_known_value():
    series = [plots.Series("Battle", [3, None, 5, 0]),
              plots.Series('<script>"evil"</script>', [1, 2, 2, 4])]
    svg = plots.line_chart(series, ["mon", "tue", "wed", "thu"], title="Votes & more",
                           kind="votes", y_label="votes")
    root = ET.fromstring(svg)
    lines = root.findall(".//svg:g[@data-series]", NS)
    assert [g.get("data-series") for g in lines] == ["Battle", '<script>"evil"</script>']
    assert [len(g.findall("svg:circle", NS)) for g in lines] == [3, 4]  # the gap has no dot
    first = lines[0].find("svg:polyline", NS).get("points").split()
    assert len(first) == 3
    # y grows downwards: 5 votes sit above 3, and 0 on the axis at the bottom
    ys = [float(p.split(",")[1]) for p in first]
    assert ys[1] < ys[0] < ys[2]
    assert len(root.findall(".//svg:g[@class]", NS)) >= 4  # two lines, two legend entries
    assert "<script>" not in svg


def test_a_line_chart_with_nothing_to_plot_says_so():
    svg = plots.line_chart([plots.Series("Battle", [None, None])], ["a", "b"], title="t",
                           kind="votes", y_label="votes", empty="No votes yet.")
    root = ET.fromstring(svg)
    assert "No votes yet." in "".join(root.itertext())
    assert root.findall(".//svg:polyline", NS) == []


def test_a_line_charts_highest_value_lies_under_its_top_gridline():
    svg = plots.line_chart([plots.Series("votes", [0, 26])], ["a", "b"], title="t",
                           kind="votes", y_label="votes")
    root = ET.fromstring(svg)
    top_grid = min(float(line.get("y1")) for line in root.findall(".//svg:line", NS))
    highest = min(float(c.get("cy")) for c in root.findall(".//svg:circle", NS))
    assert top_grid <= highest
