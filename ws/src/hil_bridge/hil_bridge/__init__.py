"""Protocol codecs, transports and the signal bridge node of the HIL links."""
