from setuptools import find_packages, setup

PACKAGE = "hil_common"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="HIL robot sim maintainers",
    maintainer_email="maintainers@hil-robot-sim.org",
    description="Shared node runtime: base error, config files, parameters, QoS, shutdown, paths, timing.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [],
    },
)
