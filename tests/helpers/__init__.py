"""Helpers the tests share: fixtures written in the real formats, oracles and limits. Tests
import from here, never from one another."""
