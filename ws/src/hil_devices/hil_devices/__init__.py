"""Device library: devices, handler templates, device sets, wiring, boards, robot profiles."""
