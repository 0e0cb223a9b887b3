"""World, robot and sensor models, the simulator node and the virtual MCU."""
