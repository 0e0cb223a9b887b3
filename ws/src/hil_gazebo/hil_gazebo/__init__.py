"""Gazebo: SDF export of a world and the robot (hil_gazebo), and the gz_adapter node."""
