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
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.urdf")),
        (f"share/{PACKAGE}/rviz", glob("rviz/*.rviz")),
        (f"share/{PACKAGE}/scenarios", glob("scenarios/*.yaml")),
        (f"share/{PACKAGE}/examples", glob("examples/*.py")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="HIL robot sim maintainers",
    maintainer_email="maintainers@hil-robot-sim.org",
    description="Launch files, parameters, URDF, rviz config and one-process runner of the HIL sim.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "hil_sim_runner = hil_bringup.sim_runner:main",
            "hil_side = hil_bringup.side:main",
            "robot_description = hil_bringup.console:robot_description",
            "recorder = hil_bringup.console:recorder",
            "hil_replay = hil_bringup.replay:main",
            "hil_teleop = hil_bringup.teleop:main",
            "hil_gazebo = hil_bringup.gazebo_tool:main",
            "hil_step = hil_bringup.console:hil_step",
            "hil_goto = hil_bringup.console:hil_goto",
            "hil_scenario = hil_bringup.console:hil_scenario",
            "hil_robot = hil_bringup.robot_tool:main",
        ],
    },
)
