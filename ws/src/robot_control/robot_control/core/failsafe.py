"""Failsafes: each stops the motors after its timeout and clears when its cause goes.

* ``cmd_vel``: no velocity command for ``cmd_vel_timeout`` (armed from start-up).
* ``mcu``: the MCU not heard (any valid line, heartbeat echoes included) for
  ``mcu_timeout`` (armed from start-up: no MCU, no driving).
* ``station``: the station's heartbeat not heard for ``station_timeout``, armed only
  once a station has been heard, since the robot also runs without one.
* ``clock`` (only with ``clock_timeout``: a loop on simulated time): the simulated
  clock has not moved for ``clock_timeout`` (armed from start-up: no world, no
  driving); fed by :meth:`ControlLoop.sim_clock <robot_control.core.loop.ControlLoop.sim_clock>`.

:meth:`Failsafes.update` is called every frame with the current time and returns the
changes (tripped or cleared) so the caller logs each once; :attr:`active` says which
hold now. Any active failsafe means motors at zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FailsafeChange:
    """A failsafe that tripped (``active``) or cleared."""

    name: str
    active: bool
    reason: str


@dataclass
class _Watch:
    timeout: float
    armed_from_start: bool
    last: float | None = None
    active: bool = False
    trips: int = 0


@dataclass
class Failsafes:
    """The watchdogs of the control loop (three, four with ``clock_timeout``)."""

    cmd_vel_timeout: float
    mcu_timeout: float
    station_timeout: float
    start: float = 0.0
    #: None: no ``clock`` failsafe (a loop on the wall clock, or in lockstep).
    clock_timeout: float | None = None
    _watches: dict[str, _Watch] = field(init=False)

    def __post_init__(self) -> None:
        self._watches = {
            "cmd_vel": _Watch(self.cmd_vel_timeout, armed_from_start=True),
            "mcu": _Watch(self.mcu_timeout, armed_from_start=True),
            "station": _Watch(self.station_timeout, armed_from_start=False),
        }
        if self.clock_timeout is not None:
            self._watches["clock"] = _Watch(self.clock_timeout, armed_from_start=True)

    @property
    def names(self) -> list[str]:
        """The failsafes this loop has."""
        return list(self._watches)

    def feed(self, name: str, now: float) -> None:
        """The cause of failsafe ``name`` was seen alive at ``now``."""
        self._watches[name].last = now

    def forget(self, name: str) -> None:
        """Disarm ``name`` as if it had never been heard (e.g. the station went away for good)."""
        watch = self._watches[name]
        watch.last = None

    def update(self, now: float) -> list[FailsafeChange]:
        """Trip and clear by the timeouts; returns what changed."""
        changes = []
        for name, watch in self._watches.items():
            reference = (
                watch.last if watch.last is not None else (self.start if watch.armed_from_start else None)
            )
            overdue = reference is not None and now - reference > watch.timeout
            if overdue and not watch.active:
                watch.active = True
                watch.trips += 1
                heard = "never heard" if watch.last is None else f"nothing for {now - watch.last:.2f} s"
                changes.append(FailsafeChange(name, True, f"{name}: {heard} (timeout {watch.timeout:g} s)"))
            elif not overdue and watch.active:
                watch.active = False
                changes.append(FailsafeChange(name, False, f"{name}: back"))
        return changes

    @property
    def active(self) -> list[str]:
        """Names of the failsafes holding the motors at zero now."""
        return [name for name, watch in self._watches.items() if watch.active]

    def trips(self, name: str) -> int:
        """How many times ``name`` has tripped."""
        return self._watches[name].trips
