from glob import glob

from setuptools import find_packages, setup

PACKAGE = "hil_bridge"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/vectors", glob("vectors/*.yaml")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="HIL robot sim maintainers",
    maintainer_email="maintainers@hil-robot-sim.org",
    description="The HIL links: line, signal and radio protocols, links, faults, bridge and radio nodes.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "signal_bridge = hil_bridge.console:signal_bridge",
            "radio_module = hil_bridge.console:radio_module",
            "hil_link_proxy = hil_bridge.console:hil_link_proxy",
        ],
    },
)
