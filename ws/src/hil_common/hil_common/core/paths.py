"""Where a package's installed data (config, launch, urdf) is."""

from __future__ import annotations

from pathlib import Path

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

from hil_common.errors import HilError

#: ws/src, for running from a source tree that was never installed.
_SOURCE_ROOT = Path(__file__).resolve().parents[3]


def share_dir(package: str) -> Path:
    """The package's share folder from the ament index, else its source folder.

    Raises:
        HilError: neither exists.
    """
    try:
        return Path(get_package_share_directory(package))
    except (PackageNotFoundError, ValueError, KeyError):
        source = _SOURCE_ROOT / package
        if (source / "package.xml").is_file():
            return source
    raise HilError(f"package {package!r} is neither installed (ament index) nor in {_SOURCE_ROOT}")
