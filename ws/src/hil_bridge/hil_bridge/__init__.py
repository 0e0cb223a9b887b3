"""The HIL links: line, signal and radio protocols, links, faults, bridge and radio nodes."""
