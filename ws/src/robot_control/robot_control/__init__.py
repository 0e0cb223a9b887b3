"""The robot's soft real-time control loop and its behaviours."""
