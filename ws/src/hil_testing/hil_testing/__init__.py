"""Test tools: scenarios and checks, step and go-to tests, HilSession, pytest plugin, soak."""
