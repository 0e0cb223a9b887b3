from glob import glob

from setuptools import find_packages, setup

PACKAGE = "hil_testing"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/scenarios", glob("scenarios/*.yaml")),
        (f"share/{PACKAGE}/examples", glob("examples/*.py")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="HIL robot sim maintainers",
    maintainer_email="maintainers@hil-robot-sim.org",
    description="Test tools: scenarios and checks, step and go-to tests, HilSession, pytest plugin, soak.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "hil_step = hil_testing.console:hil_step",
            "hil_goto = hil_testing.console:hil_goto",
            "hil_scenario = hil_testing.console:hil_scenario",
        ],
    },
)
