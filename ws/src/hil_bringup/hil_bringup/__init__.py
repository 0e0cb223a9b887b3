"""The graph of a run: options, launch files, graph runner, hil_side, recorder, replay."""
