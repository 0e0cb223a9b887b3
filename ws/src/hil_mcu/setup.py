from glob import glob

from setuptools import find_packages, setup

PACKAGE = "hil_mcu"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="HIL robot sim maintainers",
    maintainer_email="maintainers@hil-robot-sim.org",
    description="Simulated MCUs: the virtual MCU and the robot firmware in simavr, and their nodes.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "virtual_mcu = hil_mcu.console:virtual_mcu",
            "simavr_mcu = hil_mcu.console:simavr_mcu",
        ],
    },
)
