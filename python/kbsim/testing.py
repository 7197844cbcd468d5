"""The SDK's component harness from pytest (sdk/README.md, "Write it in Python"): one component, a block written in
Python or any loaded one, built with the real engine and joined to neighbours that record what reaches them, with
exact simulated times::

    import kbsim.testing
    import pinger  # the plugin file, imported as a module

    def test_a_ping_arrives_after_the_link():
        h = kbsim.testing.Harness()
        h.block(pinger.Pinger, {"send_to": "peer", "count": 1})
        peer = h.neighbour("peer", "link", to_component={"bandwidth_gbs": 64, "latency_ns": 2},
                           from_component={"bandwidth_gbs": 64, "latency_ns": 2})
        h.build()
        h.run()
        assert [t for t, _ in peer.received] == [3.0]  # 64 B in 1 ns, plus 2 ns

The block's Python runs in this interpreter: no kbsim process, nothing to build.
"""

from . import _kbsim, _plugins


class Harness:
    """A system of one component under test (node id ``id``) and the neighbours a test declares, with the plugins
    of ``plugins`` (directories) and the implementation names of ``components`` (files) beside kbsim's own."""

    def __init__(self, plugins=(), components=(), id="dut"):
        self._h = _kbsim.Harness([str(p) for p in plugins], [str(c) for c in components], str(id))

    def block(self, cls, params=None):
        """The component under test: a block class declared with ``@kbsim.component``, with ``params``."""
        file, listing = _plugins.declared_component(cls)
        self._h.block(file, listing, dict(params or {}))

    def component(self, impl, params=None):
        """The component under test by implementation name (components.yaml), with ``params``."""
        self._h.component(str(impl), dict(params or {}))

    def neighbour(self, id, kind="link", to_component=None, from_component=None):
        """A neighbour ``id`` joined by links of kind ``kind`` (dicts of bandwidth_gbs, latency_ns, flit_bytes);
        its ``received`` lists ``(time_ns, kbsim.Message)`` of what reached it, in order."""
        return self._h.neighbour(str(id), str(kind), dict(to_component or {}), dict(from_component or {}))

    def build(self):
        """Make every component and call setup(): a configuration error is raised here."""
        self._h.build()

    def inject(self, at_ns, sender, msg, to=""):
        """At ``at_ns``, neighbour ``sender`` sends ``msg`` (a kbsim.Message) to the component under test; with
        ``to`` (another neighbour), the message carries the route there, which transit components follow."""
        self._h.inject(float(at_ns), str(sender), msg, str(to))

    def run(self, until_ns=None):
        """Process events up to ``until_ns`` (all of them by default)."""
        self._h.run(-1.0 if until_ns is None else float(until_ns))

    @property
    def now_ns(self):
        return self._h.now_ns

    def stat(self, name):
        """A statistic of the component under test: ``(count, value)``."""
        return self._h.stat(str(name))
