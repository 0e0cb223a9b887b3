from glob import glob

from setuptools import find_packages, setup

PACKAGE = "hil_bringup"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/rviz", glob("rviz/*.rviz")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="HIL robot sim maintainers",
    maintainer_email="maintainers@hil-robot-sim.org",
    description="The graph of a run: options, launch files, graph runner, hil_side, recorder, replay.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "hil_sim_runner = hil_bringup.hil_sim_runner:main",
            "hil_side = hil_bringup.hil_side:main",
            "robot_description = hil_bringup.console:robot_description",
            "recorder = hil_bringup.console:recorder",
            "live_view = hil_bringup.console:live_view",
            "hil_replay = hil_bringup.hil_replay:main",
            "hil_teleop = hil_bringup.teleop:main",
            "hil_robot = hil_bringup.robot_tool:main",
        ],
    },
)
