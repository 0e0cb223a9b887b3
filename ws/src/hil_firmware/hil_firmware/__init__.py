"""Firmware tooling: bridge-board sketches, AVR builds, thesis import (hil_sketch)."""
