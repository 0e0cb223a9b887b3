from glob import glob

from setuptools import find_packages, setup

PACKAGE = "hil_sim"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/worlds", glob("worlds/*.yaml")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.urdf")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="HIL robot sim maintainers",
    maintainer_email="maintainers@hil-robot-sim.org",
    description="World simulator: world, physics, motors, sensors, noise, radio, robot URDF, sim node.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "sim = hil_sim.console:sim",
        ],
    },
)
