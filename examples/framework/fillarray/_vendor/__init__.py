"""Third-party code fillarray vendors: dlgen's output under python/."""
