"""Real runs on this machine: execute a TaskGraph, time it, calibrate."""
