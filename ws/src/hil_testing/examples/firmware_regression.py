"""Firmware regression tests in plain pytest, with the ``hil`` fixture of hil_bringup.

Each test gets the whole HIL graph in lockstep (fresh per test, stopped after it),
configured by its ``hil`` marker; the run repeats exactly, so a failure is a change
in the firmware, the control code or the models, not a loaded machine. Run with:

    pytest -p hil_testing.pytest_plugin ws/src/hil_testing/examples/firmware_regression.py
"""

import math

import pytest


@pytest.mark.hil(mcu="simavr", world="empty")
def test_firmware_drives_to_a_waypoint(hil):
    """The firmware in simavr, driven on cmd_vel closed loop, reaches a pose in time."""
    result = hil.goto(0.5, 0.3, math.pi / 2, timeout=10.0)
    assert result.reached, f"ended {result.position_error * 100:.1f} cm from the goal"
    assert result.time < 6.0


@pytest.mark.hil(world="empty")
def test_motor_step_matches_the_motor_model(hil):
    """A motor step through cmd_vel: the wheels answer as the DC motor model says."""
    step = hil.step(150, 150, seconds=1.0)
    for name, wheel in step.wheels.items():
        assert abs(wheel.gain_error) < 0.05, (
            f"{name}: gain {wheel.fit.gain:.4f}, model {wheel.model.gain:.4f}"
        )
        assert abs(wheel.tau_error) < 0.1, f"{name}: tau {wheel.fit.tau:.3f} s, model {wheel.model.tau:.3f} s"
    assert step.mcu_command == (150.0, 150.0)  # TL1 reports what the MCU applies


@pytest.mark.hil(world="empty", physics="mujoco")
def test_stop_holds_the_motors_until_go(hil):
    """STOP on robotCommand holds the motors at zero, GO releases them."""
    hil.hold_cmd_vel(0.15)
    hil.run(1.0)
    hil.command("STOP")
    hil.wait_until(lambda: abs(hil.sim.v[0]) < 1e-3, timeout=1.0, what="the robot at rest")
    assert hil.telemetry["TL1"] == {"right": 0.0, "left": 0.0}
    hil.command("GO")
    hil.wait_until(lambda: hil.sim.v[0] > 0.1, timeout=1.0, what="the robot moving again")
    assert hil.failsafes == []


@pytest.mark.hil(world="empty", checked=True, faults=True)
def test_checked_links_survive_a_noisy_line(hil):
    """In checked mode lossy, corrupting links neither stop the robot nor garble telemetry."""
    hil.hold_cmd_vel(0.15)
    hil.run(0.5)
    hil.inject_fault("both", drop=0.01, corrupt=0.01)
    hil.run(3.0)
    assert "mcu" not in hil.failsafes
    assert 0.0 <= hil.telemetry["TL2"]["heading_deg"] <= 360.0
    hil.clear_faults()
