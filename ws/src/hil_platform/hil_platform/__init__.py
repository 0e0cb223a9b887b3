"""The 6-DOF motion platform: datagrams, cueing, session, UDP link, node and emulator."""
