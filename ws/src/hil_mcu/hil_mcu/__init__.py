"""Simulated MCUs: the virtual MCU and the robot firmware in simavr, and their nodes."""
