from glob import glob

from setuptools import find_packages, setup

PACKAGE = "hil_platform"

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
    description="The 6-DOF motion platform: datagrams, cueing, session, UDP link, node and emulator.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "hil_platform_emulator = hil_platform.console:hil_platform_emulator",
            "motion_platform = hil_platform.console:motion_platform",
        ],
    },
)
