from glob import glob

from setuptools import find_packages, setup

PACKAGE = "robot_control"

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
    description="Soft real-time control loop of the robot: command link, heartbeats, failsafes, behaviours.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "control_loop = robot_control.console:control_loop",
        ],
    },
)
