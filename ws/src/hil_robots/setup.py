import os
from pathlib import Path

from setuptools import setup

PACKAGE = "hil_robots"


def tree(folder):
    """Every file under ``folder``, as data_files entries that keep the folder layout."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d != "build")
        files = [str(Path(dirpath) / name) for name in sorted(filenames)]
        if files:
            entries.append((f"share/{PACKAGE}/{dirpath}", files))
    return entries


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=[],
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        *tree("robots"),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="HIL robot sim maintainers",
    maintainer_email="maintainers@hil-robot-sim.org",
    description="The shipped robots of the HIL sim: profiles, firmware sketches, scenarios.",
    license="Apache-2.0",
)
