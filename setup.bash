# Source this file (`source setup.bash`) to use the HIL workspace in a shell:
# the .venv made by tools/bootstrap.py, the ROS 2 it provides (or the sourced
# ROS 2 install), the tf2_msgs overlay if one was built, and ws/install.
# Afterwards `python3 -c "from hil_msgs.msg import Telemetry"` and the console
# scripts of the workspace work. Run `make bootstrap` first.

_hil_root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ ! -x "$_hil_root/.venv/bin/python" ] || [ ! -f "$_hil_root/ws/install/local_setup.bash" ]; then
  echo "setup.bash: the workspace is not bootstrapped; run: make -C $_hil_root bootstrap" >&2
  unset _hil_root
  return 1 2>/dev/null || exit 1
fi

# shellcheck disable=SC1091
VIRTUAL_ENV_DISABLE_PROMPT=${VIRTUAL_ENV_DISABLE_PROMPT:-} source "$_hil_root/.venv/bin/activate"

if [ -d "$_hil_root/.venv/share/ament_index" ]; then
  # ROS 2 from PyPI wheels: the venv is the ROS prefix (ROS2_ON_PIP.md).
  export HIL_ROS_FROM_WHEELS=1
  export ROS_DISTRO=jazzy ROS_VERSION=2 ROS_PYTHON_VERSION=3
  case ":${AMENT_PREFIX_PATH:-}:" in *":$VIRTUAL_ENV:"*) ;; *)
    export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}" ;; esac
  case ":${CMAKE_PREFIX_PATH:-}:" in *":$VIRTUAL_ENV:"*) ;; *)
    export CMAKE_PREFIX_PATH="$VIRTUAL_ENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}" ;; esac
  # The wheels' own start-up hook (ros_wheels_bootstrapper) re-executes every Python
  # process to add these folders to LD_LIBRARY_PATH; adding them here once and
  # setting its guard saves that second exec on every node start.
  _hil_libs="$VIRTUAL_ENV/lib"
  for _hil_dir in "$VIRTUAL_ENV"/lib/python3*/site-packages/ros_*.libs; do
    [ -d "$_hil_dir" ] && _hil_libs="$_hil_libs:$_hil_dir"
  done
  case ":${LD_LIBRARY_PATH:-}:" in *":$VIRTUAL_ENV/lib:"*) ;; *)
    export LD_LIBRARY_PATH="$_hil_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;; esac
  export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1
  unset _hil_libs _hil_dir
fi

# shellcheck disable=SC1091
[ -f "$_hil_root/.overlay/install/local_setup.bash" ] && source "$_hil_root/.overlay/install/local_setup.bash"
# shellcheck disable=SC1091
source "$_hil_root/ws/install/local_setup.bash"
if [ -n "${HIL_ROS_FROM_WHEELS:-}" ]; then
  # No `ros2 run` without ros2cli: put the packages' executables (installed, as ROS 2
  # does, in install/<pkg>/lib/<pkg>) on PATH instead.
  for _hil_dir in "$_hil_root"/ws/install/*/lib/*; do
    case "$_hil_dir" in */lib/python3*) continue ;; esac
    [ -d "$_hil_dir" ] || continue
    case ":$PATH:" in *":$_hil_dir:"*) ;; *) PATH="$_hil_dir:$PATH" ;; esac
  done
  export PATH
  unset _hil_dir
fi
# Where the environment asks Python not to write bytecode (PYTHONDONTWRITEBYTECODE, as
# many container images set it), every node, tool and test process would compile the
# workspace's modules again as it starts: 0.3 s of CPU a process, and 5 s for each
# pytest worker's collection, in a test run that starts hundreds. The bytecode is kept
# instead, outside the source tree, in .cache/pycache (a prefix already set is kept).
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ] && [ -z "${PYTHONPYCACHEPREFIX:-}" ]; then
  unset PYTHONDONTWRITEBYTECODE
  export PYTHONPYCACHEPREFIX="$_hil_root/.cache/pycache"
fi
export HIL_ROOT="$_hil_root"
unset _hil_root
