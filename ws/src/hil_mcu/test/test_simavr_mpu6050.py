"""The MPU-6050 in the firmware-in-the-loop harness, read by its registers over Wire.

The simulator sends the library's ``mpu6050`` signals (specific force in m/s^2,
rotation rate in rad/s, temperature in C); a sketch in the common raw style
(``sketches/mpu6050_raw``) writes the configuration registers and burst-reads the 14
output bytes from 0x3B, at rest (az = +1 g) and turning (gz), for two full-scale
settings of each sensor.
"""

from __future__ import annotations

import math

import pytest

from support.sketch_rig import SketchRig, library_device

MPU6050 = library_device("mpu6050")
G = 9.80665
PWR_MGMT_1, GYRO_CONFIG, ACCEL_CONFIG = 0x6B, 0x1B, 0x1C
#: The frame carries 0.001 m/s^2 and 0.00025 rad/s steps: a count or two of the
#: finest ranges.
SLACK = 2


def mpu_rig(board: str = "uno", *, ad0: int = 0) -> SketchRig:
    sda, scl = {"uno": ("A4", "A5"), "mega2560": ("20", "21")}[board]
    return SketchRig(
        "mpu6050_raw",
        board=board,
        devices=[("imu", MPU6050)],
        pins={"imu.sda": sda, "imu.scl": scl},
        defines={"MPU_ADDR": 0x68 + ad0},
        params={"imu": {"ad0": ad0}},
    )


def answer(rig: SketchRig, line: str, tag: str) -> list[float]:
    got = [text for text in rig.command_line(line) if text.startswith(f"{tag} ")]
    assert got, f"no {tag} line for {line!r}"
    return [float(field) for field in got[-1].split()[1:]]


def raw(rig: SketchRig) -> list[float]:
    rig.advance(0.01)  # the values of the last set() are in
    return answer(rig, "r", "r")


@pytest.mark.parametrize("board", ["uno", "mega2560"])
def test_at_rest_and_turning_read_as_the_datasheet_scales_them(board: str) -> None:
    rig = mpu_rig(board)
    try:
        assert answer(rig, "i", "i") == [0x68]
        assert raw(rig) == [0.0] * 7  # asleep since power-on
        rig.command_line(f"w {PWR_MGMT_1} 0")
        # at rest, chip level: +1 g on z, 25 C
        ax, ay, az, temp, gx, gy, gz = raw(rig)
        assert abs(az - 16384) <= SLACK and abs(ax) <= SLACK and abs(ay) <= SLACK
        assert (gx, gy, gz) == (0, 0, 0)
        assert temp == round((25 - 36.53) * 340)
        # turning left at 1 rad/s: 57.3 deg/s x 131 LSB
        rig.set(imu__gz=1.0)
        assert abs(raw(rig)[6] - math.degrees(1.0) * 131) <= SLACK
        # +-8 g and +-2000 deg/s
        rig.command_line(f"w {ACCEL_CONFIG} {2 << 3}")
        rig.command_line(f"w {GYRO_CONFIG} {3 << 3}")
        rig.set(imu__gz=-3.0, imu__az=0.5 * G, imu__ax=-2 * G)
        ax, _, az, _, _, _, gz = raw(rig)
        assert abs(az - 0.5 * 4096) <= SLACK and abs(ax + 2 * 4096) <= SLACK
        assert abs(gz - math.degrees(-3.0) * 16.4) <= SLACK
        az_g, gz_dps, celsius = answer(rig, "r", "c")  # as the sketch scales them
        assert az_g == pytest.approx(0.5, abs=0.001) and gz_dps == pytest.approx(-171.887, abs=0.1)
        assert celsius == pytest.approx(25.0, abs=0.01)
        assert rig.stats()["mpu6050_samples"] >= 4
    finally:
        rig.close()


def test_outputs_clamp_at_the_range_and_sleep_freezes_them_and_a_reset_clears_them() -> None:
    rig = mpu_rig()
    try:
        rig.command_line(f"w {PWR_MGMT_1} 0")
        rig.set(imu__az=3 * G, imu__gx=8.0)  # beyond +-2 g and +-250 deg/s
        _, _, az, _, gx, _, _ = raw(rig)
        assert (az, gx) == (32767, 32767)
        rig.set(imu__az=-1 * G)
        assert raw(rig)[2] == pytest.approx(-16384, abs=SLACK)
        rig.command_line(f"w {PWR_MGMT_1} {0x40}")  # sleep: the last sample stays
        rig.set(imu__az=1 * G)
        assert raw(rig)[2] == pytest.approx(-16384, abs=SLACK)
        rig.command_line(f"w {PWR_MGMT_1} {0x80}")  # DEVICE_RESET: power-on state, asleep
        assert raw(rig) == [0.0] * 7
        assert answer(rig, "i", "i") == [0x68]
    finally:
        rig.close()


def test_ad0_high_answers_at_0x69() -> None:
    rig = mpu_rig(ad0=1)
    try:
        assert answer(rig, "i", "i") == [0x68]  # WHO_AM_I says 0x68 at either address
        rig.command_line(f"w {PWR_MGMT_1} 0")
        assert abs(raw(rig)[2] - 16384) <= SLACK
    finally:
        rig.close()
