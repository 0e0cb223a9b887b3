"""Shared node runtime: base error, config files, parameters, QoS, shutdown, paths, timing."""
