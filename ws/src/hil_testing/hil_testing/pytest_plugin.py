"""pytest plugin: firmware regression tests in plain pytest, against the HIL graph in lockstep.

Enable it with ``pytest -p hil_testing.pytest_plugin`` (or ``pytest_plugins =
["hil_testing.pytest_plugin"]`` in the rootdir's ``conftest.py``). A test that asks
for the ``hil`` fixture gets a fresh :class:`~hil_testing.session.HilSession`: the
whole graph (MCU, signal bridge, simulator, control loop) in lockstep on simulated
time, stopped at teardown. Its options come from the ``hil`` marker (the fields of
:class:`~hil_bringup.core.graph.GraphOptions`, a world name of hil_sim, a start pose)::

    @pytest.mark.hil(mcu="simavr", world="empty", start=(0.0, 0.0, 0.0))
    def test_drives_to_a_waypoint(hil):
        result = hil.goto(0.5, 0.3, 1.57, timeout=10.0)
        assert result.reached

The session offers ``goto``, ``step`` (a motor step with its first-order fit),
``wait_until``, ``inject_fault`` (needs ``faults=True``), ``run``, ``hold_cmd_vel``,
``command``, and reads ``sim``, ``pose``, ``telemetry``, ``failsafes``; with a robot
whose brain is ``none`` (``robot="rab_style"``, or a robot folder relative to the test
file) ``serial`` is the firmware's command UART. Without a marker the run is MANUAL in
the demo world with the virtual MCU.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the graph's modules load only when a test asks for the fixture
    from hil_testing.session import HilSession

MARKER = (
    "hil(**options): options of the `hil` fixture's graph: GraphOptions fields (mcu, world, behaviour, "
    "checked, faults, seed, firmware, ...), world as a name of hil_sim (demo, empty, swarm) or a path, "
    "start=(x, y, yaw)"
)


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``hil`` marker (for ``--strict-markers``)."""
    config.addinivalue_line("markers", MARKER)


def session_options(marker_options: dict[str, Any], *, base: Path) -> tuple[Any, Any]:
    """The GraphOptions and start pose of a ``hil`` marker's options.

    Raises:
        HilTestingError: an unknown option or a bad value (naming it).
    """
    from hil_bringup.core.graph import GraphOptions  # noqa: PLC0415
    from hil_bringup.core.options import on  # noqa: PLC0415
    from hil_bringup.core.robots import resolve_robots  # noqa: PLC0415
    from hil_common.errors import HilError  # noqa: PLC0415
    from hil_sim.core.world import Pose  # noqa: PLC0415
    from hil_testing.core.scenario import resolve_world  # noqa: PLC0415
    from hil_testing.errors import HilTestingError  # noqa: PLC0415

    options = {"behaviour": "manual", **marker_options}
    start = options.pop("start", None)
    known = set(on(GraphOptions, "marker"))
    unknown = sorted(set(options) - known)
    if unknown:
        raise HilTestingError(
            f"@pytest.mark.hil: unknown option(s) {unknown} (known: start, {', '.join(sorted(known))})"
        )
    if options.get("faults"):
        # Fault proxies with clean lines: inject_fault() decides when a link goes bad.
        options.setdefault("fault_drop", 0.0)
        options.setdefault("fault_corrupt", 0.0)
    options["world"] = resolve_world(str(options.get("world", "")), base=base, source="@pytest.mark.hil")
    if "robot" in options:  # a robot folder relative to the test file, or a shipped robot's name
        try:
            options["robot"] = resolve_robots(str(options["robot"]), base=base)
        except HilError as exc:
            raise HilTestingError(f"@pytest.mark.hil: robot = {exc}") from None
    pose = None
    if start is not None:
        try:
            x, y, yaw = (float(v) for v in start)
        except (TypeError, ValueError):
            raise HilTestingError(f"@pytest.mark.hil: start = {start!r} is not (x, y, yaw)") from None
        pose = Pose(x, y, yaw)
    return GraphOptions(rtf=0.0, **options), pose


@pytest.fixture
def hil(request: pytest.FixtureRequest) -> Iterator[HilSession]:
    """A fresh HIL graph in lockstep for this test, stopped at teardown (options: ``hil`` marker)."""
    from hil_testing.session import HilSession  # noqa: PLC0415

    marker = request.node.get_closest_marker("hil")
    options, start = session_options(
        dict(marker.kwargs) if marker else {}, base=Path(str(request.path)).parent
    )
    session = HilSession(options, start=start)
    try:
        yield session
    finally:
        session.stop()
