"""World simulator: world, physics, motors, sensors, noise, radio, robot URDF, sim node."""
