"""Soft real-time control loop of the robot: command link, heartbeats, failsafes, behaviours."""
