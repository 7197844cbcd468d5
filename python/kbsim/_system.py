"""kbsim.System: a configured system's nodes, links and pictures, as ``kbsim topology`` gives them."""

import json
import os
import tempfile

from . import _kbsim


class SVG:
    """An SVG picture; Jupyter shows it inline. ``str()`` is the SVG text."""

    def __init__(self, text):
        self.text = text

    def _repr_svg_(self):
        return self.text

    def __str__(self):
        return self.text

    def save(self, path):
        with open(path, "w") as f:
            f.write(self.text)


def _args(topology, set, plugins):
    args = []
    if topology is not None:
        args += ["--topology", os.fspath(topology)]
    for key, value in (set or {}).items():
        value = "true" if value is True else "false" if value is False else value
        args += ["--set", "{}={}".format(key, value)]
    for d in plugins:
        args += ["--plugins", os.fspath(d)]
    return args


class System:
    """The configured system of a topology (default: the default AHBM system), checked as a run would check it.

    ``nodes``: every node as a dict (``id``, ``impl``, ``type``, resolved ``params``); ``links``: every directed
    edge (``src``, ``dst``, ``kind``, ``bandwidth_gbs``, ``latency_ns``, ...); ``routing``: the routing metric and
    views; ``view(name)``: the topology front-end's picture ``name`` (``system``, ``sip``, ``cube``, ``pe``) as SVG.
    A bad topology or ``set`` raises :class:`kbsim.ConfigError` naming file:line:column.
    """

    def __init__(self, topology=None, set=None, plugins=()):
        self._args = _args(topology, set, plugins)
        with tempfile.TemporaryDirectory(prefix="kbsim-system-") as tmp:
            graph = os.path.join(tmp, "graph.json")
            _kbsim.command_line(["topology", *self._args, "--json", graph], quiet=True)
            with open(graph) as f:
                g = json.load(f)
        self.source = g["source"]
        self.routing = g["routing"]
        self.nodes = g["nodes"]
        self.links = g["edges"]
        self._views = None

    def node(self, node_id):
        """The node named ``node_id``; KeyError if there is none."""
        for n in self.nodes:
            if n["id"] == node_id:
                return n
        raise KeyError(node_id)

    def views(self):
        """The names of the pictures the topology's front-end draws."""
        self._draw()
        return sorted(self._views)

    def view(self, name="system"):
        """The picture ``name`` as :class:`SVG` (Jupyter displays it)."""
        self._draw()
        if name not in self._views:
            raise KeyError("no view '{}' (the front-end draws: {})".format(name, ", ".join(sorted(self._views))))
        return SVG(self._views[name])

    def _draw(self):
        if self._views is not None:
            return
        with tempfile.TemporaryDirectory(prefix="kbsim-views-") as tmp:
            _kbsim.command_line(["topology", *self._args, "--svg", tmp], quiet=True)
            views = {}
            for name in sorted(os.listdir(tmp)):
                if name.endswith(".svg"):
                    with open(os.path.join(tmp, name)) as f:
                        views[name[:-4]] = f.read()
        self._views = views

    def _repr_svg_(self):
        return self.view("system").text

    def __repr__(self):
        return "<kbsim.System {}: {} nodes, {} links>".format(self.source, len(self.nodes), len(self.links))


SVG.__module__ = System.__module__ = "kbsim"
