"""py.pinger: the SDK guide's pinger (sdk/README.md, section 2) written in Python, a plugin file (sdk/README.md,
"Write it in Python"). It sends `count` pings of `ping_bytes` to node `send_to`, one every `interval_ns`, and
measures their latency where they arrive.

    kbsim run --plugins examples/python_plugins --components examples/python_plugins/components.yaml \\
        --topology examples/python_plugins/pingers.yaml

It makes the same sends and timers at the same simulated times as the C++ pinger, so the system bench reports the
same statistics for either (the tests check it).
"""

import kbsim


@kbsim.component("py_pinger", "sends pings to another node and measures their latency (the SDK guide's pinger)",
                 params=[kbsim.Param("send_to", "", "destination node id; empty: only receive"),
                         kbsim.Param("count", 4, "pings to send"),
                         kbsim.Param("interval_ns", 10.0, "time between pings"),
                         kbsim.Param("ping_bytes", 64, "payload bytes per ping")],
                 ports=[kbsim.Port("*", "any link")],
                 stats=[kbsim.Stat("sent", "counter", "pings", "pings sent"),
                        kbsim.Stat("received", "counter", "pings", "pings received"),
                        kbsim.Stat("latency_mean_ns", "value", "ns", "mean ping latency")])
class Pinger(kbsim.Block):
    def __init__(self):
        if self.params["count"] < 0:
            self.reject("count", "must be >= 0")
        self.sent, self.received = self.stat("sent"), self.stat("received")
        self.latency = self.stat("latency_mean_ns")
        self.route = None

    def setup(self):  # the whole graph exists: routes can be computed
        if not self.params["send_to"] or self.params["count"] == 0:
            return
        self.route = self.route_to(self.params["send_to"])
        self.schedule(0)  # on_timer at t = 0

    def on_timer(self, tag, msg):
        # The ping carries its send time (ps); transit nodes follow its route.
        ping = kbsim.Message(bytes=self.params["ping_bytes"], route=self.route, data=self.now)
        self.send(self.route.ports[0], ping)
        self.sent.count += 1
        if self.sent.count < self.params["count"]:
            self.schedule(self.params["interval_ns"])

    def on_message(self, port, msg):
        if msg.type != "python.Message":
            self.fail("expected a ping, got a {} from {}".format(msg.type, msg.sender))
        self.latency.value += (self.now - msg.data) / 1000.0  # ps to ns, as ticks_to_ns
        self.received.count += 1

    def finish(self):
        if self.received.count > 0:
            self.latency.value /= self.received.count
