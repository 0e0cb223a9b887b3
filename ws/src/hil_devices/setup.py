from glob import glob

from setuptools import find_packages, setup

PACKAGE = "hil_devices"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.json")),
        (f"share/{PACKAGE}/config/devices", glob("config/devices/*.json")),
        (f"share/{PACKAGE}/config/handlers", glob("config/handlers/*.tmpl")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="HIL robot sim maintainers",
    maintainer_email="maintainers@hil-robot-sim.org",
    description="Device library: devices, handler templates, device sets, wiring, boards, robot profiles.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [],
    },
)
