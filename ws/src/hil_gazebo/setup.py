from glob import glob

from setuptools import find_packages, setup

PACKAGE = "hil_gazebo"

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
    description="Gazebo: SDF export of a world and the robot (hil_gazebo), and the gz_adapter node.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "gz_adapter = hil_gazebo.console:gz_adapter",
            "hil_gazebo = hil_gazebo.gazebo_tool:main",
        ],
    },
)
