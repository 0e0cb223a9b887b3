"""rosbag2 bags of HIL runs, in MCAP storage, through rosbags.

:func:`typestore` knows the ROS 2 Jazzy message types and hil_msgs (read from the
installed ``.msg`` files, so a new message needs no code here). :class:`BagWriter`
writes serialized messages as they arrive; :func:`read_bag` reads a bag back as
(topic, time, message) for the replay. Bags carry the run's options as custom data
(``hil_run``), so a replay can rebuild the same graph.

A bag says what rosbag2 (Jazzy) writes about its recording: the ROS distro
(``ROS_DISTRO``, in ``metadata.yaml`` and in the MCAP file's ``rosbag2`` metadata
record; rosbags' writer would put ``rosbags`` there) and each topic's offered QoS
profiles (:func:`offered_profile`), from which ``ros2 bag play`` chooses what it
offers: a latched topic (``/tf_static``, ``robot_description``) is played transient
local again, so a subscriber that joins later still gets it.
"""

from __future__ import annotations

import json
import os
import struct
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import yaml
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.rosbag2.storage_mcap import McapWriter
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from hil_bringup.errors import HilBringupError
from hil_common.core.config_file import load_yaml
from hil_common.core.paths import share_dir

if TYPE_CHECKING:
    from rosbags.rosbag2.writer import StorageWriter

#: Custom-data key of the run's options in a bag's metadata.yaml.
RUN_KEY = "hil_run"
#: The top-level key of rosbag2's metadata.yaml.
_INFO = "rosbag2_bagfile_information"


def typestore() -> Typestore:
    """ROS 2 Jazzy's message types plus every hil_msgs message."""
    store = get_typestore(Stores.ROS2_JAZZY)
    folder = share_dir("hil_msgs") / "msg"
    types: dict[str, Any] = {}
    for path in sorted(folder.glob("*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"hil_msgs/msg/{path.stem}"))
    store.register(types)
    return store


def ros_distro() -> str:
    """The ROS distro a bag records: ``ROS_DISTRO``, as rosbag2 takes it (empty when unset)."""
    return os.environ.get("ROS_DISTRO", "")


def offered_profile(
    *,
    history: int,
    depth: int,
    reliability: int,
    durability: int,
    deadline_ns: int = 0,
    lifespan_ns: int = 0,
    liveliness: int = 0,
    liveliness_lease_ns: int = 0,
    avoid_ros_namespace_conventions: bool = False,
) -> Qos:
    """A publisher's QoS as a bag records it; policies by their rmw numbers, durations in ns.

    rclpy's policy enums have rmw's numbers, and so have rosbags' (0 is the system
    default; a duration of 0 is unspecified, the default too).
    """

    def duration(ns: int) -> QosTime:
        return QosTime(sec=ns // 1_000_000_000, nsec=ns % 1_000_000_000)

    return Qos(
        history=QosHistory(history),
        depth=depth,
        reliability=QosReliability(reliability),
        durability=QosDurability(durability),
        deadline=duration(deadline_ns),
        lifespan=duration(lifespan_ns),
        liveliness=QosLiveliness(liveliness),
        liveliness_lease_duration=duration(liveliness_lease_ns),
        avoid_ros_namespace_conventions=avoid_ros_namespace_conventions,
    )


def _with_distro(metadata: dict[str, Any]) -> dict[str, Any]:
    """rosbag2's bag information with this machine's ROS distro."""
    return {**metadata, "ros_distro": ros_distro()}


def _dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=False)


class _McapStorage(McapWriter):
    """rosbags' MCAP storage, with the ROS distro in the file's ``rosbag2`` metadata record."""

    def close(self, version: int, metadata: str) -> None:
        """Close the file, its metadata record naming the ROS distro."""
        super().close(version, _dump(_with_distro(yaml.safe_load(metadata))).strip())


class _Writer(Writer):
    """rosbags' writer, with the ROS distro in ``metadata.yaml`` and in the MCAP file."""

    STORAGE_PLUGINS: Mapping[StoragePlugin, type[StorageWriter]] = MappingProxyType(
        {**Writer.STORAGE_PLUGINS, StoragePlugin.MCAP: _McapStorage}
    )

    def close(self) -> None:
        """Close the bag and write ``metadata.yaml``, naming the ROS distro."""
        super().close()
        data = yaml.safe_load(self.metapath.read_text())
        data[_INFO] = _with_distro(data[_INFO])
        temporary = self.metapath.with_suffix(".yaml.tmp")
        temporary.write_text(_dump(data))
        temporary.replace(self.metapath)


class BagWriter:
    """A rosbag2 (MCAP) bag being written; thread-safe, one connection per topic."""

    def __init__(self, path: str | Path, *, store: Typestore | None = None) -> None:
        self.path = Path(path)
        if self.path.exists():
            raise HilBringupError(f"{self.path}: a bag (or file) is already there; choose a new path")
        self.store = store or typestore()
        self._writer = _Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def knows(self, msgtype: str) -> bool:
        """True if messages of ``msgtype`` (``pkg/msg/Name``) can be written."""
        return msgtype in self.store.types

    def has(self, topic: str) -> bool:
        """True once ``topic`` has a connection (its first message was written)."""
        return topic in self._connections

    def write(
        self, topic: str, msgtype: str, stamp_ns: int, data: bytes, *, offered: Iterable[Qos] = ()
    ) -> None:
        """Write one serialized (CDR) message received at ``stamp_ns``.

        ``offered``: the QoS profiles of the topic's publishers (:func:`offered_profile`),
        recorded with the topic's first message.
        """
        with self._lock:
            connection = self._connections.get(topic)
            if connection is None:
                connection = self._writer.add_connection(
                    topic, msgtype, typestore=self.store, offered_qos_profiles=list(offered)
                )
                self._connections[topic] = connection
            self._writer.write(connection, stamp_ns, data)
            self.counts[topic] = self.counts.get(topic, 0) + 1

    def close(self, run: dict[str, Any] | None = None) -> None:
        """Finish the bag (metadata.yaml), with the run's options as custom data."""
        with self._lock:
            if run is not None:
                self._writer.set_custom_data(RUN_KEY, json.dumps(run, sort_keys=True))
            self._writer.close()


def read_bag(path: str | Path, topics: Iterable[str] = ()) -> Iterator[tuple[str, int, Any]]:
    """(topic, receive time in ns, message) of a bag, in time order; only ``topics`` if given.

    Every record of the bag is read, wanted or not, and each topic's count checked
    against metadata.yaml, so damage to the bag's structure is found wherever it is;
    only the wanted messages are decoded. (rosbags writes no chunk checksums: a
    flipped byte inside a message that leaves it well formed reads as another value.)

    Raises:
        HilBringupError: not a readable bag, or a damaged one; the message names the
            bag and what is wrong.
    """
    store = typestore()
    wanted = set(topics)
    counts: Counter[int] = Counter()
    try:
        with Reader(path) as reader:
            for connection, stamp, data in reader.messages():
                counts[connection.id] += 1
                if wanted and connection.topic not in wanted:
                    continue
                try:
                    message = store.deserialize_cdr(data, connection.msgtype)
                except Exception as exc:
                    raise HilBringupError(
                        f"{path}: the bag is damaged: a {connection.msgtype} message on "
                        f"{connection.topic} at {stamp * 1e-9:.3f} s cannot be decoded "
                        f"({_what_is_wrong(exc.__cause__ or exc)})"
                    ) from None
                yield connection.topic, stamp, message
            for connection in reader.connections:
                if counts[connection.id] != connection.msgcount:
                    raise HilBringupError(
                        f"{path}: the bag is damaged: {counts[connection.id]} {connection.topic} messages "
                        f"in its data, metadata.yaml says {connection.msgcount}"
                    )
    except HilBringupError:
        raise
    except Exception as exc:
        raise HilBringupError(
            f"{path}: cannot read the bag (damaged, or not a rosbag2 bag): {_what_is_wrong(exc)}"
        ) from None


def _what_is_wrong(exc: BaseException) -> str:
    """What a reader's or decoder's exception says about the bag, in words."""
    if isinstance(exc, UnicodeDecodeError):
        return f"a name or text that should be UTF-8 is not ({exc.reason} at byte {exc.start})"
    if isinstance(exc, MemoryError):
        return "a record claims a size larger than memory"
    if isinstance(exc, (struct.error, OverflowError, ValueError, OSError, IndexError, KeyError)):
        return f"a malformed record ({type(exc).__name__}: {exc})"
    return str(exc) or type(exc).__name__


def run_options(path: str | Path) -> dict[str, Any]:
    """The run options a bag was recorded with (empty if it has none).

    Raises:
        HilBringupError: not a readable bag.
    """
    metadata = Path(path) / "metadata.yaml"
    data = load_yaml(metadata, what="the bag's metadata", error=HilBringupError)
    info = data.get(_INFO) if isinstance(data, dict) else None
    if not isinstance(info, dict):
        raise HilBringupError(f"{metadata}: not a rosbag2 metadata file (no rosbag2_bagfile_information)")
    custom = info.get("custom_data") or {}
    text = custom.get(RUN_KEY) if isinstance(custom, dict) else None
    if not text:
        return {}
    try:
        options = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise HilBringupError(f"{metadata}: custom_data.{RUN_KEY} is not JSON: {exc}") from None
    if not isinstance(options, dict):
        raise HilBringupError(f"{metadata}: custom_data.{RUN_KEY} is not a mapping of run options")
    return options
