"""Unit tests: pure logic and in-process pieces; no guest builds, no network beyond loopback."""
