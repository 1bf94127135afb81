"""Tests of agent-host: `unit/` (pure logic, in-process), `component/` (real guests, real servers)."""
