"""Launch files, parameters and the one-process runner of the HIL simulator."""
