"""Renderers gantt, svg, trace and html: their content (SVG elements, trace events, escaped
names), the layout they share, and the refusal of a schedule of another problem."""

import io
import json
import re

import pytest

from schedkit import Problem, ScheduleError, Schedule, TaskRun, solve
from schedkit.report import RENDERERS, render
from schedkit.report.html import markdown_html
from schedkit.report.layout import CHANNEL_ROWS, Layout, check_fits, memory_series
from schedkit.report.trace import trace_events

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def tiny():
    problem = Problem.load("examples/tiny.yaml")
    return problem, solve(problem, "heft")


@pytest.fixture(scope="module")
def evil():
    """tiny with a task called <script>alert(1)</script> and one called a$b$ (mathtext)."""
    data = {"name": "evil & co", "devices": [{"name": "gpu<0>", "memory": 100}, {"name": "cpu"}],
            "links": [{"src": "gpu<0>", "dst": "cpu", "bandwidth": 10}],
            "tasks": [{"name": EVIL, "durations": {"gpu<0>": 2, "cpu": 5}, "op": "Op<b>",
                       "memory": 10, "activation_memory": 20},
                      {"name": "a$b$", "durations": {"cpu": 1}, "activation_memory": 5}],
            "edges": [{"src": EVIL, "dst": "a$b$", "size": 10}]}
    problem = Problem.from_dict(data)
    return problem, solve(problem, "heft")


def test_registry_has_every_picture():
    assert {"gantt", "svg", "trace", "html", "text"} <= set(RENDERERS.names())


def test_layout_rows_colours_and_utilisation(tiny):
    problem, schedule = tiny
    layout = Layout.of(problem, schedule)
    assert layout.devices == ["gpu0", "cpu"] and layout.channels == ["gpu0->cpu"]
    assert layout.routes == [["gpu0->cpu"]]
    busy = {u.name: u for u in layout.utilisation()}
    assert busy["gpu0"].runs == 5 and busy["gpu0"].busy == pytest.approx(4.2)
    assert busy["cpu"].share == pytest.approx(0.3 / schedule.makespan)
    assert len(set(layout.colours.values())) == 6  # one group per task name here
    assert Layout.of(problem, schedule, "device").legend == [("gpu0", "#1f77b4"), ("cpu", "#ff7f0e")]


def test_many_channels_become_send_rows():
    from schedkit.generators import layered

    problem = Problem.from_dict(layered(levels=6, width=12, edge_prob=0.5, long_range_prob=0.2,
                                        devices=10, seed=2))
    schedule = solve(problem, "heft")
    per_channel = {(t.from_, t.to) for t in schedule.transfers}
    assert len(per_channel) > CHANNEL_ROWS
    layout = Layout.of(problem, schedule)
    assert layout.channels == [f"{d} sends" for d in problem.devices if d in {t.from_ for t in schedule.transfers}]


def test_memory_series_follow_the_lifetime_rule(evil):
    problem, _ = evil
    rows = [TaskRun(task=EVIL, device="gpu<0>", start=0, end=2), TaskRun(task="a$b$", device="cpu", start=3, end=4)]
    from schedkit.schedule import Transfer

    schedule = Schedule(problem="evil & co", method="hand", status="heuristic", tasks=rows,
                        transfers=[Transfer(src=EVIL, dst="a$b$", **{"from": "gpu<0>"}, to="cpu", start=2, end=3)])
    levels = memory_series(problem, schedule)
    # gpu: static 10 from 0; the output (20) from the start until the transfer ends at 3.
    assert levels["gpu<0>"] == [(0.0, 30.0), (3.0, 10.0)]
    # cpu: the copy (20) from the transfer's start to its reader's end; a$b$'s own 5 over its run.
    assert levels["cpu"] == [(0.0, 0.0), (2.0, 20.0), (3.0, 25.0), (4.0, 0.0)]


def test_other_problem_is_refused(tiny):
    problem, schedule = tiny
    other = schedule.model_copy(update={"problem": "hetero20"})
    with pytest.raises(ScheduleError, match=r"^s.json: the schedule is for problem 'hetero20', not 'tiny'$"):
        check_fits(problem, other, "s.json")
    for kind in ("gantt", "svg", "trace", "html"):
        with pytest.raises(ScheduleError):
            render(kind, problem, other)


def test_gantt_png_and_svg(tiny, evil):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    problem, schedule = tiny
    png = render("gantt", problem, schedule, dpi=50)
    image = imread(io.BytesIO(png))
    assert image.shape[1] == 600 and image.shape[0] > 150  # 12 in at 50 dpi, memory panel below
    colours = {tuple(int(round(255 * c)) for c in px[:3]) for px in image.reshape(-1, image.shape[2])[::7]}
    assert (0x1f, 0x77, 0xb4) in colours  # the first palette colour is drawn
    svg = render("gantt", problem, schedule, format="svg").decode()
    for name in ("gpu0", "cpu", "gpu0-&gt;cpu", "embed", "logits", "time", "memory"):
        assert name in svg, name
    assert render("gantt", problem, schedule, format="svg") == render("gantt", problem, schedule, format="svg")
    problem, schedule = evil
    svg = render("gantt", problem, schedule, format="svg").decode()
    assert "<script" not in svg and "&lt;script&gt;" in svg and "a$b$" in svg
    with pytest.raises(Exception, match="unknown format 'gif'"):
        render("gantt", problem, schedule, format="gif")


def test_gantt_200_devices_stays_legible():
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    data = {"name": "wide", "devices": [{"name": f"d{k}"} for k in range(200)],
            "tasks": [{"name": f"t{k}", "work": 1 + k % 3} for k in range(200)]}
    problem = Problem.from_dict(data)
    schedule = solve(problem, "heft")
    image = imread(io.BytesIO(render("gantt", problem, schedule, dpi=40)))  # noqa: E501
    assert 200 * 0.11 * 40 < image.shape[0] < 200 * 0.2 * 40 + 200  # ~0.11 in per row, not 200 x 0.42


def test_svg_elements_and_escaping(tiny, evil):
    problem, schedule = tiny
    svg = render("svg", problem, schedule)
    assert svg.count('<rect class="task"') == 6 and svg.count('<rect class="transfer"') == 1
    assert "<title>embed on gpu0: 0 - 0.4</title>" in svg
    problem, schedule = evil
    svg = render("svg", problem, schedule)
    assert EVIL not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert "gpu&lt;0&gt;" in svg


def test_trace_events(tiny):
    problem, schedule = tiny
    events = trace_events(problem, schedule, scale=1000)
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {0: "gpu0", 1: "cpu", 2: "gpu0->cpu"}
    runs = {e["name"]: e for e in events if e["ph"] == "X" and e["cat"] != "transfer"}
    assert set(runs) == set(problem.tasks)
    assert runs["mlp"]["pid"] == 0 and runs["mlp"]["ts"] == pytest.approx(400) and \
        runs["mlp"]["dur"] == pytest.approx(1500)
    moves = [e for e in events if e["ph"] == "X" and e["cat"] == "transfer"]
    assert [(m["name"], m["pid"]) for m in moves] == [("logits -> sample", 2)]
    flow = sorted((e["ph"], e["pid"]) for e in events if e["ph"] in "stf")
    assert flow == [("f", 1), ("s", 0), ("t", 2)]
    start = next(e for e in events if e["ph"] == "s")
    assert runs["logits"]["ts"] <= start["ts"] <= runs["logits"]["ts"] + runs["logits"]["dur"]
    counters = [e for e in events if e["ph"] == "C"]
    assert counters and all(e["name"] == "memory" for e in counters)
    text = render("trace", problem, schedule)
    assert json.loads(text)["otherData"]["makespan"] == schedule.makespan


def test_trace_escapes_through_json(evil):
    problem, schedule = evil
    data = json.loads(render("trace", problem, schedule))
    assert EVIL in {e["name"] for e in data["traceEvents"]}


def test_html_report_content(tiny):
    problem, schedule = tiny
    page = render("html", problem, schedule, formulation="## Formulation `x`\n\n$$a \\le b$$",
                  violations=[])
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert page.count('<rect class="task"') == 6
    for text in ("status-heuristic", ">valid<", "22.89%", "4.51625", "gpu0-&gt;cpu", "logits &rarr; sample",
                 '<pre class="math">a ≤ b</pre>', "<code>x</code>"):
        assert text in page, text
    assert re.search(r"<td>gpu0</td><td class=\"num\">5</td>", page)
    broken = render("html", problem, schedule, violations=["task 'embed' overlaps 'mlp' on gpu0"])
    assert "invalid: 1 violation(s)" in broken and "task &#39;embed&#39; overlaps" in broken
    assert "not validated" in render("html", problem, schedule)


def test_html_escapes_names(evil):
    problem, schedule = evil
    page = render("html", problem, schedule, violations=[])
    assert EVIL not in page and "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "evil &amp; co" in page


def test_markdown_is_escaped():
    html = str(markdown_html("# T <b>\n\n- one `x<y`\n  continued\n- two\n\ntext"))
    assert html == ("<h2>T &lt;b&gt;</h2>\n<ul><li>one <code>x&lt;y</code> continued</li>"
                    "<li>two</li></ul>\n<p>text</p>")


def test_missing_matplotlib_names_the_extra(tiny, monkeypatch, tmp_path, capfd):
    import importlib

    from schedkit import SchedkitError
    from schedkit.cli.main import main
    from schedkit.report import gantt

    real = importlib.import_module

    def no_matplotlib(name, *args):
        if name == "matplotlib":
            raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")
        return real(name, *args)

    monkeypatch.setattr(gantt.importlib, "import_module", no_matplotlib)
    problem, schedule = tiny
    with pytest.raises(SchedkitError, match=r"plotting needs the 'viz' extra \(matplotlib\): "
                                            r"pip install 'schedkit\[viz\]'"):
        render("gantt", problem, schedule)
    schedule.write(tmp_path / "s.json")
    out = tmp_path / "g.png"
    assert main(["plot", "examples/tiny.yaml", str(tmp_path / "s.json"), "-o", str(out)]) == 1
    err = capfd.readouterr().err
    assert err.startswith("schedkit: error: plotting needs the 'viz' extra") and len(err.splitlines()) == 1
    assert not out.exists()
    assert '<rect class="task"' in render("svg", problem, schedule)  # the report's SVG needs no matplotlib


MATH = ["$\\frac{$", "$x^$", "$\\undefinedcommand$", "a $\\alpha$ b", "$$", "cost $5 and $6"]


@pytest.mark.parametrize("text", MATH)
@pytest.mark.parametrize("where", ["title", "task", "device", "op", "problem"])
def test_dollars_are_drawn_as_written(text, where):
    # matplotlib's mathtext would parse '$...$' (and fail on bad LaTeX): every text is plain.
    pytest.importorskip("matplotlib")
    names = {"task": "t", "device": "gpu", "op": "conv", "problem": "p", where: text}
    data = {"name": names["problem"], "devices": [{"name": names["device"], "memory": 9}],
            "tasks": [{"name": names["task"], "durations": {names["device"]: 1}, "op": names["op"],
                       "memory": 1, "activation_memory": 1},
                      {"name": "u", "durations": {names["device"]: 1}, "op": "other"}]}  # a legend
    problem = Problem.from_dict(data)
    schedule = solve(problem, "heft")
    title = text if where == "title" else None
    svg = render("gantt", problem, schedule, format="svg", title=title).decode()
    assert text.replace("&", "&amp;") in svg
    assert render("gantt", problem, schedule, format="png", title=title, dpi=20)[:4] == b"\x89PNG"


@pytest.mark.parametrize("kind, options, words", [
    ("gantt", {"width": 0}, "width: must be a number from 2 to 1000 inches, not 0"),
    ("gantt", {"width": -3.0}, "width: must be"),
    ("gantt", {"width": float("nan")}, "width: must be"),
    ("gantt", {"width": float("inf")}, "width: must be"),
    ("gantt", {"width": "12"}, "width: must be"),
    ("gantt", {"width": True}, "width: must be"),
    ("gantt", {"dpi": 0}, "dpi: must be a whole number from 10 to 2400, not 0"),
    ("gantt", {"dpi": -1}, "dpi: must be"),
    ("gantt", {"dpi": 5.5}, "dpi: must be"),
    ("gantt", {"dpi": 100_000}, "dpi: must be"),
    ("gantt", {"width": 1000, "dpi": 2400}, "too large"),
    ("gantt", {"title": 3}, "the title must be text"),
    ("gantt", {"colour_by": "mood"}, "colour_by: unknown 'mood'"),
    ("gantt", {"colour": "red"}, "renderer 'gantt' takes no option 'colour'"),
    ("svg", {"width": 0}, "width: must be a whole number"),
    ("svg", {"colour_by": "mood"}, "colour_by: unknown 'mood'"),
    ("html", {"colour_by": 3}, "colour_by: unknown 3"),
    ("trace", {"scale": 0}, "scale: must be"),
    ("trace", {"scale": float("nan")}, "scale: must be"),
    ("trace", {"scale": "ms"}, "scale: must be"),
])
def test_out_of_range_picture_options_are_one_line_errors(tiny, kind, options, words):
    from schedkit import SchedkitError

    if kind == "gantt":
        pytest.importorskip("matplotlib")
    problem, schedule = tiny
    with pytest.raises(SchedkitError, match=re.escape(words)):
        render(kind, problem, schedule, **options)


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x0b", "\x7f", "\x9b", "\n", "\u202e"])
@pytest.mark.parametrize("kind", ["gantt", "svg", "html"])
def test_control_characters_in_names_are_drawn_escaped(char, kind):
    # As in messages (errors.printable): an SVG or a page with a raw control character does
    # not parse as XML, and would show nothing readable.
    import xml.etree.ElementTree as ElementTree

    from schedkit.errors import printable

    if kind == "gantt":
        pytest.importorskip("matplotlib")
    task, device = f"t{char}x", f"d{char}y"
    problem = Problem.from_dict({
        "name": f"p{char}", "devices": [{"name": device, "memory": 9}, {"name": "e"}],
        "links": [{"src": device, "dst": "e", "bandwidth": 1}],
        "tasks": [{"name": task, "durations": {device: 1, "e": 3}, "op": f"o{char}", "memory": 1,
                   "activation_memory": 1}, {"name": "u", "durations": {device: 1, "e": 1}, "op": "z"}],
        "edges": [{"src": task, "dst": "u", "size": 1}]})
    schedule = solve(problem, "heft")
    out = render(kind, problem, schedule, **({"format": "svg"} if kind == "gantt" else {}))
    text = out.decode() if isinstance(out, bytes) else out
    svg = re.search(r"<svg.*?</svg>", text, re.S).group(0) if kind == "html" else text
    ElementTree.fromstring(svg.encode())
    assert printable(task) in text and printable(device) in text
    if char != "\n":
        assert char not in text
