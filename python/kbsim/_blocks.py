"""Hardware blocks written in Python, for prototyping (sdk/README.md, "Write it in Python").

A block is a class derived from :class:`Block`, declared with :func:`kbsim.component` (its parameters, ports and
statistics, as a C++ component's ``info()`` lists them)::

    @kbsim.component("py_echo", "sends every message back where it came from",
                     params=[kbsim.Param("delay_ns", 1.0, "time to turn a message round")],
                     ports=[kbsim.Port("*", "any link")],
                     stats=[kbsim.Stat("echoed", "counter", "messages", "messages sent back")])
    class Echo(kbsim.Block):
        def on_message(self, port, msg):
            self.stat("echoed").count += 1
            self.send(port, kbsim.Message(bytes=msg.bytes, data=msg.data), delay_ns=self.params["delay_ns"])

kbsim makes one object per node whose implementation maps to the type (a components file: ``impl: {library:
FILE.py, type: TYPE}``) and calls ``setup()``, ``on_message(port, msg)``, ``on_timer(tag, msg)`` and ``finish()``
as it calls a C++ component's, at the same simulated times. A message a block makes is a ``python.Message``: a size
in bytes (what the links carry and time), an optional route for transit nodes, and ``data``, any Python value.
"""

import collections

from ._errors import ConfigError, SimulationError

Port = collections.namedtuple("Port", "label doc", defaults=("",))
Port.__doc__ = "A port a block declares: the edge kind it accepts (``*``: any) and what it is for."
Stat = collections.namedtuple("Stat", "name kind unit doc", defaults=("counter", "", ""))
Stat.__doc__ = ("A statistic a block declares: ``kind`` counter (an exact count) or value (a real number), its unit "
                "and what it counts. results.json has it under ``components.<node id>``.")
_KINDS = ("counter", "value")


class Block:
    """The base of a block written in Python: what a C++ component reaches through its protected helpers.

    ``id``, ``params`` (dict), ``now`` (sim time in ps, an int), ``now_ns``, ``in_ports`` and ``out_ports`` (lists
    of ``(label, peer id)``, by port index), :meth:`send`, :meth:`schedule`, :meth:`cancel`, :meth:`route_to`,
    :meth:`find_node`, :meth:`stat`, :meth:`reject` and :meth:`fail`. Override ``setup``, ``on_message``,
    ``on_timer`` and ``finish``; ``__init__(self)`` (no arguments) may read ``params`` and reject them."""

    _c = None  # its component (kbsim._kbsim.BlockCore), set before __init__

    @property
    def id(self):
        return self._core().id

    @property
    def params(self):
        p = self.__dict__.get("_params")
        if p is None:
            p = self.__dict__["_params"] = self._core().params
        return p

    @property
    def now(self):
        return self._core().now

    @property
    def now_ns(self):
        return self._core().now / 1000.0

    @property
    def in_ports(self):
        return self._core().in_ports

    @property
    def out_ports(self):
        return self._core().out_ports

    def send(self, port, msg, delay_ns=0.0):
        """Send ``msg`` (a :class:`kbsim.Message`) on out-port ``port``, handing it to the link ``delay_ns`` from
        now."""
        self._core().send(int(port), msg, float(delay_ns))

    def schedule(self, delay_ns=0.0, tag=0, msg=None):
        """Call ``on_timer(tag, msg)`` ``delay_ns`` from now; returns what :meth:`cancel` takes."""
        return self._core().schedule(float(delay_ns), int(tag), msg)

    def cancel(self, event):
        self._core().cancel(event)

    def route_to(self, node, view=""):
        """The path from this node to node id ``node`` (routing view ``view``, default all): ``ports[0]`` is the
        out-port to send on; give it to a message (``route=``) for transit nodes to follow."""
        return self._core().route_to(str(node), str(view))

    def find_node(self, node):
        return self._core().find_node(str(node))

    def stat(self, name):
        """A declared statistic's storage: ``.count`` (int) and ``.value`` (float), read and written."""
        return self._core().stat(str(name))

    def reject(self, param, what):
        """Refuse a parameter's value, as a C++ component's ``params().check`` does (a configuration error)."""
        raise ConfigError(self._core().rejection(str(param), str(what)))

    def fail(self, what):
        """End the run with a simulation error naming this node and the sim time, as a C++ component's fail()."""
        raise SimulationError(self._core().failure(str(what)))

    def setup(self):
        """Called once the whole system exists (routes can be computed)."""

    def on_message(self, port, msg):
        self.fail("received a message but handles none")

    def on_timer(self, tag, msg):
        self.fail("a timer fired but the component handles none")

    def finish(self):
        """Called when the run ends: turn sums into means here."""

    def _core(self):
        if self._c is None:
            raise RuntimeError("this block's component no longer exists (its run has ended)")
        return self._c


class _Component:
    def __init__(self, type, summary, params, ports, stats, cls):
        self.name, self.summary, self.params, self.cls = type, summary, list(params), cls
        self.ports = [Port(*p) if not isinstance(p, Port) else p for p in ports]
        self.stats = [Stat(*s) if not isinstance(s, Stat) else s for s in stats]
        for s in self.stats:
            if s.kind not in _KINDS:
                raise TypeError("component {!r}: statistic {!r} has kind {!r}, not counter or value".format(
                    type, s.name, s.kind))


def make(decl, core):
    """A new block of ``decl``'s class for the component ``core``."""
    block = decl.cls.__new__(decl.cls)
    block._c = core
    block.__init__()
    return block
