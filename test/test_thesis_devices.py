"""A thesis-format device (JSON + .hlr, loaded unchanged) is coupled to the firmware in simavr as ours is."""

from __future__ import annotations

from pathlib import Path

from hil_bridge.core.signal_protocol import SignalLayout
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_library
from hil_mcu.core.simavr import coupling_text, load_robot_wiring

CONFIG = Path(__file__).resolve().parents[1] / "ws" / "src" / "hil_devices" / "config"
LIBRARY = load_device_library([CONFIG / "devices", CONFIG / "thesis_examples"])


def test_demo_robot_with_the_thesis_hc_sr04_has_the_same_coupling_but_its_id(tmp_path: Path) -> None:
    demo = (CONFIG / "demo_robot_devices.yaml").read_text()
    (tmp_path / "set.yaml").write_text(demo.replace("device: hc_sr04}", "device: HC_SR04}"))
    ours = SignalLayout(load_device_set(CONFIG / "demo_robot_devices.yaml", LIBRARY))
    thesis = SignalLayout(load_device_set(tmp_path / "set.yaml", LIBRARY))
    assert thesis.slot("ultrasonic", "distance").id == 20
    wiring = load_robot_wiring()

    def without_ids(layout: SignalLayout) -> list[str]:
        lines = coupling_text(layout, wiring).splitlines()
        return [" ".join(word for k, word in enumerate(line.split()) if k != 1) for line in lines]

    assert without_ids(thesis) == without_ids(ours)
    assert "out 20 float 0 200 200 echo 4 9" in coupling_text(thesis, wiring)
